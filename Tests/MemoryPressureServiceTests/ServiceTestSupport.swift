#if canImport(Glibc)
import Glibc
#endif
import Logging
import MemoryPressure
import MemoryTestSupport
import Synchronization
import SystemPackage
import Testing

let mebibyte = 1 << 20

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
/// `source`, sampled every 20 ms, with no settle time, no repeats and no stall input.
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
    let system = try MemorySystem(configuration: configuration)
    source.attach(system)
    return system
}

/// Every event a system emits, kept as it comes (through a synchronous observer, so none is lost).
final class EventLog: Sendable {
    private let events = Mutex<[MemorySystemEvent]>([])
    private let observation = Mutex<ObservationToken?>(nil)

    init(observing system: MemorySystem) {
        let token = system.events.observe { [self] event in events.withLock { $0.append(event) } }
        observation.withLock { $0 = token }
    }

    var all: [MemorySystemEvent] { events.withLock { $0 } }

    /// The first event matching `predicate`, once there is one (see ``eventually(within:_:)``).
    func first(where predicate: @escaping (MemorySystemEvent) -> Bool) async -> MemorySystemEvent? {
        guard await eventually({ self.all.contains(where: predicate) }) else { return nil }
        return all.first(where: predicate)
    }
}

extension MemorySystemEvent {
    /// Whether this is a ladder run that brought the footprint under target.
    var endsUnderTarget: Bool {
        if case .ladderRun(let run) = self { run.latency != nil } else { false }
    }

    /// Whether this is a ladder run at `level`.
    func isLadderRun(at level: PressureLevel) -> Bool {
        if case .ladderRun(let run) = self { run.level == level } else { false }
    }
}

/// Whether `condition` holds, looking every 10 ms for at most `limit` (a deadline that only stops a
/// broken test from hanging; no test asserts timing).
func eventually(within limit: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// A logger that drops everything.
let silentLogger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

/// What the test apps did, by app: their callbacks in order.
final class AppJournal: Sendable {
    private let callbacks = Mutex<[String: [String]]>([:])

    func record(_ callback: String, of app: App) {
        callbacks.withLock { $0[app.identifier.rawValue, default: []].append(callback) }
    }

    func callbacks(of app: String) -> [String] {
        callbacks.withLock { $0[app] ?? [] }
    }
}

/// What an app saves: the callback it saved from.
struct SavedState: Codable, Equatable {
    var savedIn: String
}

/// An app that records its callbacks and the state each launch restored, saves its state on
/// entering the background and in `willTerminate`, and holds `ballastBytes` in its heap while it
/// runs.
final class JournalDelegate: AppDelegate {
    let journal: AppJournal
    let registry: PurgeRegistry
    let ballastBytes: Int
    private var ballast: HeapBuffer?

    init(journal: AppJournal, registry: PurgeRegistry, ballastBytes: Int = 0) {
        self.journal = journal
        self.registry = registry
        self.ballastBytes = ballastBytes
    }

    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        journal.record("didFinishLaunching", of: app)
        if let restored = try? options.restoredState(as: SavedState.self) {
            journal.record("restored from \(restored.savedIn)", of: app)
        }
        guard ballastBytes > 0 else { return }
        do {
            ballast = try registry.heap(for: app.identifier).allocate(byteCount: ballastBytes)
        } catch {
            Issue.record("ballast for \(app.identifier): \(error)")
        }
    }

    func didEnterBackground(_ app: isolated App) {
        journal.record("didEnterBackground", of: app)
        save(SavedState(savedIn: "didEnterBackground"), from: app)
    }

    func willTerminate(_ app: isolated App) {
        journal.record("willTerminate", of: app)
        save(SavedState(savedIn: "willTerminate"), from: app)
    }

    private func save(_ state: SavedState, from app: isolated App) {
        guard app.stateArchive != nil else { return }
        do {
            try app.saveState(state)
        } catch {
            Issue.record("saving \(app.identifier): \(error)")
        }
    }
}

