import ArgumentParser
import Foundation
import MemoryPressure
import MemoryPressureClient
import MemoryPressureSimulation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `mempressure app-process`: the tool as one simulated app of `mempressure run --processes`, a
/// child process that hears its app's callbacks through MemoryPressureClient. Hidden: only the tool
/// starts it.
struct AppProcess: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app-process",
        abstract: "Run as one simulated app of `mempressure run --processes` (started by the tool, not by hand).",
        shouldDisplay: false
    )

    @Option(help: "The app's profile: a built-in profile's name, or the profile as JSON.")
    var profile: String

    @Option(help: "The app's name.")
    var app: String

    @Option(help: "The scenario's seed.")
    var seed: UInt64 = 0

    @Option(help: "The app's place in the scenario (1 for the first).")
    var index: Int = 1

    func run() throws {
        guard let profile = AppProcessProfile.parse(profile) else {
            throw BadInput("app-process: --profile \(self.profile.echoed()) is neither a built-in profile nor a profile's JSON")
        }
        let client: MemoryPressureClient
        do {
            guard let fromEnvironment = try MemoryPressureClient.fromEnvironment() else {
                throw BadInput("app-process runs only as a child of `mempressure run --processes` (\(MemoryPressureClient.environmentName) is not set)")
            }
            client = fromEnvironment
        } catch let error as BadInput {
            throw error
        } catch {
            Self.exit(1, "app-process: \(error)")
        }
        let memory = ProcessAppMemory(profile: profile, seed: seed, index: index)
        do {
            try client.start(delegate: ProcessAppProcessDelegate(app: app, memory: memory, client: client))
        } catch {
            Self.exit(1, "app-process: \(error)")
        }
        let ticker = Task.detached {
            let clock = ContinuousClock()
            var last = clock.now
            while !Task.isCancelled {
                try? await Task.sleep(until: last + ProcessAppMemory.activityInterval, clock: clock)
                let now = clock.now
                let (whole, attoseconds) = min(now - last, ProcessAppMemory.activityInterval * 4).components
                memory.performActivity(seconds: Double(whole) + Double(attoseconds) * 1e-18)
                last = now
            }
        }
        let ending = client.wait()
        ticker.cancel()
        Glibc.exit(ending == .terminated ? 0 : 3)
    }

    private static func exit(_ status: Int32, _ message: String) -> Never {
        var standardError = StandardError()
        print(message, to: &standardError)
        Glibc.exit(status)
    }
}

/// The child's delegate: hands each callback to the app's memory, and saves its launch's state on
/// entering the background (restored at its next launch, as an in-process simulated app's is).
final class ProcessAppProcessDelegate: MemoryPressureClientDelegate {
    let app: String
    let memory: ProcessAppMemory
    let client: MemoryPressureClient
    /// This launch's number: one more than the restored state's (1 when none was restored).
    private var launch = 1

    init(app: String, memory: ProcessAppMemory, client: MemoryPressureClient) {
        self.app = app
        self.memory = memory
        self.client = client
    }

    func didFinishLaunching(options: ClientLaunchOptions) {
        if let bytes = options.restoredState, let restored = try? JSONDecoder().decode(SavedState.self, from: Data(bytes)) {
            launch = restored.launch + 1
        }
        memory.load()
    }

    func didBecomeActive() { memory.becomeActive() }
    func willResignActive() { memory.resignActive() }

    func didEnterBackground() {
        memory.enterBackground()
        let state = SavedState(app: app, launch: launch, activity: 0, screen: 0, cacheEntries: 0)
        do {
            try client.saveState(Array(try JSONEncoder().encode(state)))
        } catch {
            var standardError = StandardError()
            print("app-process \(app): state not saved: \(error)", to: &standardError)
        }
    }

    func didReceiveMemoryWarning(level: MemoryWarningLevel) { memory.trimForWarning() }
}

/// A simulated app's memory in its own process, after ``AppProfile``, as the in-process simulated
/// app's root controller holds it: pages mapped and every one written, so that they are resident
/// and the system's measure of the child sees them.
///
/// - Launch loads the profile's launch bytes into the app's own data; a launch straight into the
///   background (no `didBecomeActive` before `didEnterBackground`) is a fetch and adds its fetch
///   bytes.
/// - While active (from `didBecomeActive` to `willResignActive`), every 50 ms of the child's own
///   clock is a slice of the user's activity: the cache and the app's own data grow at the
///   profile's rates, the screen on show is drawn (its backing store), now and then another screen.
///   Playback holds its buffer while active.
/// - `didEnterBackground` releases what the system would purge of an in-process app on entering the
///   background: images and media emptied, rebuildable objects trimmed to 10%, the screens' backing
///   stores, and the playback buffer (a child cannot hold a background task, so it suspends at once).
/// - `didReceiveMemoryWarning` keeps the profile's fraction of the cache, and the visible screen's
///   backing store only.
final class ProcessAppMemory: Sendable {
    private struct State: ~Copyable {
        var generator: SeededGenerator
        var nextEntryBytes: Int
        var isActive = false
        var wasActiveSinceLaunch = false
        var workingSet: [MappedRegion] = []
        var grownBytes = 0
        var cache: [MappedRegion] = []
        var cacheBytes = 0
        var stores: [Int: MappedRegion] = [:]
        var screen = 0
        var playback: MappedRegion?
        var cacheCredit = 0.0
        var workingSetCredit = 0.0
    }

    let profile: AppProfile
    private let state: Mutex<State>

    init(profile: AppProfile, seed: UInt64, index: Int) {
        self.profile = profile
        var generator = SeededGenerator(seed: seed, stream: UInt64(max(index, 0)) << 32 | 1)
        let first = generator.uniform(in: profile.cache.entryBytes)
        state = Mutex(State(generator: generator, nextEntryBytes: first))
    }

    /// How often, while active, the app takes a slice of activity.
    static let activityInterval: Duration = .milliseconds(50)
    /// The app's own data grows in pieces of this size.
    static let chunk = 1 << 20
    /// The chance, at each slice, that the user moves to another screen.
    static let screenChangeChance = 0.1
    /// The fraction of rebuildable objects kept on entering the background.
    static let rebuildableKeptInBackground = 0.1

    func load() {
        state.withLock { state in
            state.wasActiveSinceLaunch = false
            Self.add(profile.launchBytes, to: &state.workingSet)
        }
    }

    func becomeActive() {
        state.withLock { state in
            state.isActive = true
            state.wasActiveSinceLaunch = true
            showScreen(&state)
            if let playback = profile.playback, state.playback == nil, playback.bufferBytes > 0 {
                state.playback = MappedRegion(bytes: playback.bufferBytes)
            }
        }
    }

    func resignActive() {
        state.withLock { $0.isActive = false }
    }

    func enterBackground() {
        state.withLock { state in
            state.isActive = false
            if !state.wasActiveSinceLaunch {
                Self.add(profile.fetchBytes, to: &state.workingSet)
            }
            state.stores.removeAll()
            state.playback = nil
            switch profile.cache.kind {
            case .images, .media: trimCache(&state, toFraction: 0)
            case .rebuildableObjects: trimCache(&state, toFraction: Self.rebuildableKeptInBackground)
            }
        }
    }

    func trimForWarning() {
        state.withLock { state in
            trimCache(&state, toFraction: profile.keptOnWarning)
            let visible = state.isActive ? state.screen : -1
            state.stores = state.stores.filter { $0.key == visible }
        }
    }

    /// `seconds` of the user's activity, when the app is active.
    func performActivity(seconds: Double) {
        state.withLock { state in
            guard state.isActive else { return }
            state.cacheCredit += Double(profile.cache.bytesPerSecond) * seconds
            while state.cacheCredit >= Double(state.nextEntryBytes) {
                state.cacheCredit -= Double(state.nextEntryBytes)
                guard let entry = MappedRegion(bytes: state.nextEntryBytes) else {
                    state.cacheCredit = 0
                    break
                }
                state.cache.append(entry)
                state.cacheBytes += entry.bytes
                state.nextEntryBytes = state.generator.uniform(in: profile.cache.entryBytes)
            }
            // The least recently used entries go beyond the cost limit.
            trimCache(&state, toBytes: max(profile.cache.limitBytes, 1))
            state.workingSetCredit += Double(profile.workingSet.bytesPerSecond) * seconds
            while state.workingSetCredit >= Double(Self.chunk) {
                state.workingSetCredit -= Double(Self.chunk)
                guard state.grownBytes + Self.chunk <= profile.workingSet.limitBytes else { continue }
                guard let piece = MappedRegion(bytes: Self.chunk) else {
                    state.workingSetCredit = 0
                    break
                }
                state.workingSet.append(piece)
                state.grownBytes += Self.chunk
            }
            if profile.screens > 1, state.generator.unitInterval() < Self.screenChangeChance {
                state.screen = (state.screen + 1 + state.generator.uniform(in: 0 ... profile.screens - 2)) % profile.screens
            }
            showScreen(&state)
        }
    }

    /// The bytes the app holds now.
    var heldBytes: Int {
        state.withLock { state in
            state.workingSet.reduce(0) { $0 + $1.bytes } + state.cacheBytes + state.stores.values.reduce(0) { $0 + $1.bytes }
                + (state.playback?.bytes ?? 0)
        }
    }

    private func showScreen(_ state: inout State) {
        guard profile.screens > 0, profile.backingStoreBytes > 0, state.stores[state.screen] == nil else { return }
        state.stores[state.screen] = MappedRegion(bytes: profile.backingStoreBytes)
    }

    private func trimCache(_ state: inout State, toFraction fraction: Double) {
        trimCache(&state, toBytes: Int(Double(state.cacheBytes) * fraction))
    }

    private func trimCache(_ state: inout State, toBytes limit: Int) {
        var removed = 0
        while state.cacheBytes > limit, removed < state.cache.count {
            state.cacheBytes -= state.cache[removed].bytes
            removed += 1
        }
        state.cache.removeFirst(removed)
    }

    /// Adds `bytes` to `data` in pieces; the first piece that cannot be mapped ends the loading.
    private static func add(_ bytes: Int, to data: inout [MappedRegion]) {
        var remaining = bytes
        while remaining > 0 {
            let size = min(remaining, chunk)
            guard let piece = MappedRegion(bytes: size) else { return }
            data.append(piece)
            remaining -= size
        }
    }
}

/// Anonymous pages, every one written, unmapped when released.
final class MappedRegion: @unchecked Sendable {
    let bytes: Int
    private let base: UnsafeMutableRawPointer

    /// `bytes` mapped and touched, or nil when they cannot be mapped.
    init?(bytes: Int) {
        guard bytes > 0, let base = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), base != MAP_FAILED else {
            return nil
        }
        memset(base, 0x5A, bytes)
        self.bytes = bytes
        self.base = base
    }

    deinit {
        munmap(base, bytes)
    }
}
