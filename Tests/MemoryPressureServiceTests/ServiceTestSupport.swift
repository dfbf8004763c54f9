import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization

/// A footprint the test sets as a base, plus what the system's apps and cache owners hold (their
/// heaps and declared cache costs), so purges and terminations move it as they would a real one.
final class OwnedFootprintSource: MemorySampleSource {
    private let state = Mutex<(base: Int, system: MemorySystem?)>((0, nil))

    var name: String { "owned footprint" }
    var depth: SampleDepth { .cheap }

    func attach(_ system: MemorySystem) {
        state.withLock { $0.system = system }
    }

    func setBase(_ bytes: Int) {
        state.withLock { $0.base = bytes }
    }

    func read(into sample: inout MemorySample) throws {
        let (base, system) = state.withLock { $0 }
        guard let system else { return }
        let owners = system.registry.owners.union(system.apps.map(\.identifier))
        sample.residentBytes = base + owners.reduce(0) { $0 + system.footprint(of: $1).totalBytes }
    }
}

/// A system judged against 100 MiB (warning at 80, critical at 95, target 70) on the footprint of
/// `source`, sampled every 20 ms, with no settle time, no repeats and no stall or cgroup event input.
func makeSystem(source: OwnedFootprintSource, archiveIn archive: TemporaryDirectory? = nil) throws -> MemorySystem {
    var configuration = MemorySystem.Configuration(
        budget: try MemoryBudget(totalBytes: 100 * mebibyte),
        stateArchiveDirectory: archive?.path,
        logger: silentLogger
    )
    configuration.monitor.sources = [source]
    configuration.monitor.interval = .milliseconds(20)
    configuration.monitor.settleTime = .zero
    configuration.monitor.repeatInterval = .seconds(3600)
    configuration.monitor.stallThresholds = nil
    configuration.monitor.stallTrigger = nil
    configuration.monitor.controlGroupEvents = .none
    let system = try MemorySystem(configuration: configuration)
    source.attach(system)
    return system
}

/// Every event a system emits, kept as it comes (through a synchronous observer, so none is lost).
final class EventLog: Sendable {
    private let events: SharedLog<MemorySystemEvent>
    private let observation: ObservationToken

    init(observing system: MemorySystem) {
        let events = SharedLog<MemorySystemEvent>()
        self.events = events
        observation = system.events.observe { events.append($0) }
    }

    var all: [MemorySystemEvent] { events.all }

    /// The first event matching `predicate`, once there is one (see ``eventually(within:_:)``).
    func first(where predicate: @escaping (MemorySystemEvent) -> Bool) async -> MemorySystemEvent? {
        guard await eventually({ self.all.contains(where: predicate) }) else { return nil }
        return all.first(where: predicate)
    }
}

extension MemorySystemEvent {
    /// Whether this is a ladder run at `level`.
    func isLadderRun(at level: PressureLevel) -> Bool {
        if case .ladderRun(let run) = self { run.level == level } else { false }
    }
}

/// What an app saves: the callback it saved from.
struct SavedState: Codable, Equatable {
    var savedIn: String
}

/// An app holding `ballastBytes` in its heap from `registry`, which records in `journal` that it
/// finished launching (and the state it restored), entered the background and was told it will
/// terminate; it saves its state in the last two when it has an archive.
func journaledDelegate(journal: TestAppJournal, registry: PurgeRegistry, ballastBytes: Int = 0) -> BallastDelegate {
    let delegate = BallastDelegate(bytes: ballastBytes, heap: registry.heap(for:), onFailure: recordIssue)
    delegate.onDidFinishLaunching = { app, options in
        journal.record("didFinishLaunching", of: app.identifier)
        if let restored = try? options.restoredState(as: SavedState.self) {
            journal.record("restored from \(restored.savedIn)", of: app.identifier)
        }
    }
    delegate.onDidEnterBackground = { app in
        journal.record("didEnterBackground", of: app.identifier)
        save(SavedState(savedIn: "didEnterBackground"), from: app)
    }
    delegate.onWillTerminate = { app in
        journal.record("willTerminate", of: app.identifier)
        save(SavedState(savedIn: "willTerminate"), from: app)
    }
    return delegate
}

/// Saves `state` from `app` when it has an archive.
private func save(_ state: SavedState, from app: isolated App) {
    guard app.stateArchive != nil else { return }
    do {
        try app.saveState(state)
    } catch {
        recordIssue("saving \(app.identifier): \(error)")
    }
}
