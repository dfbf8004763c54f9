import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import Testing

/// User code calling back into the system from everywhere the system calls user code, while the
/// ladder purges and terminates under real pressure: observers of all three event sources read
/// every public property of the app, the system and the monitor, and call back into the system
/// (register a cache, post a notification, read the apps); delegates terminate, bring forward and
/// open background tasks on their own app from inside their callbacks; eviction handlers read and
/// write their own cache; observers cancel themselves and add others from inside a callback.
///
/// Through the public API alone. A lock of the system held while user code runs shows up here as a
/// crash (a recursive lock) or a deadlock (a round that never ends); a data race as a report under
/// ThreadSanitizer (tools/ci-sanitizers).
@Suite(.timeLimit(.minutes(10)), .exclusiveMemoryUse)
struct ReentrancyTests {
    static let rounds = 1_000
    static let appCount = 5
    /// Each app's ballast; together more than the budget allows above the baseline, so that the
    /// ladder terminates.
    static let ballastMebibytes = 6

    static let thresholds = try! MemoryBudget.Thresholds(
        warning: 0.80, critical: 0.81, warningRecovery: 0.78, criticalRecovery: 0.79
    )

    @Test func userCodeCallsBackIntoTheSystemFromEveryCallbackUnderPressure() async throws {
        let baseline = try settledResidentBytes()
        var configuration = try MemorySystem.Configuration.test(
            targetBytes: baseline + 12 * mebibyte, thresholds: Self.thresholds, logger: silentLogger
        )
        configuration.monitor.interval = .milliseconds(5)
        let system = try MemorySystem(configuration: configuration)
        let witness = ReentrancyWitness()
        let apps = try (0..<Self.appCount).map { index in
            try system.register(.test("reentrant\(index)"), configuration: .patient()) { [system, witness] in
                ReentrantDelegate(system: system, witness: witness, ballastBytes: Self.ballastMebibytes * mebibyte)
            }
        }
        // Observers of all three sources, each replacing itself now and then from inside its call.
        let lifecycle = SelfReplacingObserver(witness: witness) { observer in
            system.lifecycleEvents.observe { event in
                observer.called { readEverything(system, app: system.app(event.app), witness: witness) }
                // Calls back into the system: a cache registered, a notification posted.
                if case .stateChanged(let identifier, _, .active) = event, let app = system.app(identifier) {
                    app.notificationCenter.post(name: "fromObserver")
                    let cache = try? PurgeableCache<Int, Int>(name: "observer", owner: identifier, category: .rebuildableObjects)
                    if let cache {
                        system.register(cache)
                        try? cache.setValue(1, forKey: 1, cost: 1)
                    }
                }
            }
        }
        let systemObserver = SelfReplacingObserver(witness: witness) { observer in
            system.events.observe { event in
                observer.called { readEverything(system, app: nil, witness: witness) }
                if case .termination(let record) = event {
                    _ = system.app(record.app)?.terminationReason
                }
            }
        }
        let monitorObserver = SelfReplacingObserver(witness: witness) { observer in
            system.monitor.events.observe { _ in
                observer.called { readEverything(system, app: nil, witness: witness) }
            }
        }
        lifecycle.start()
        systemObserver.start()
        monitorObserver.start()

        var random = SplitMix64(seed: 23)
        var completed = 0
        try await system.running {
            for round in 0..<Self.rounds {
                let operations = (0..<3).map { _ in
                    (app: apps[Int.random(in: 0..<apps.count, using: &random)], kind: Int.random(in: 0..<6, using: &random))
                }
                let finished = await withDeadline(.seconds(60)) {
                    await withTaskGroup(of: Void.self) { group in
                        for operation in operations {
                            group.addTask { await Self.perform(operation.kind, on: operation.app) }
                        }
                    }
                    return true
                }
                guard finished == true else {
                    Issue.record("round \(round) did not finish within 60 s: a deadlock")
                    return
                }
                completed += 1
            }
        }
        await system.shutDown()
        lifecycle.stop()
        systemObserver.stop()
        monitorObserver.stop()

        #expect(completed == Self.rounds)
        #expect(witness.failures.isEmpty, "\(witness.failures.prefix(5))")
        // It all happened: reads from every source, replaced observers, callbacks that called back,
        // evictions that used their cache, and the ladder terminating under pressure.
        #expect(witness.reads.load(ordering: .relaxed) > Self.rounds)
        #expect(witness.replacements.load(ordering: .relaxed) >= 3)
        // How many callbacks run depends on timing (an app the ladder terminated runs none until
        // relaunched; one CI run saw 891 in 1,000 rounds), so this asks only that they called back.
        #expect(witness.callsFromCallbacks.load(ordering: .relaxed) > 0)
        #expect(witness.evictionsThatUsedTheirCache.load(ordering: .relaxed) > 0)
        #expect(system.terminations.contains { $0.reason == .systemPressure })
    }

    /// One operation a round runs on `app`; refusals (an app in the wrong state) are expected.
    static func perform(_ kind: Int, on app: App) async {
        switch kind {
        case 0: _ = try? await app.launch()
        case 1: _ = try? await app.enterBackground()
        case 2: _ = try? await app.enterForeground()
        case 3: app.notificationCenter.post(name: "round", payload: .delta(1))
        case 4: _ = try? await app.launch(options: LaunchOptions(reason: .backgroundEvent("round")))
        default: _ = try? await app.terminate(reason: .explicit)
        }
    }
}

/// Reads every public property of the system, its monitor and `app`, and calls the system's
/// reading methods.
private func readEverything(_ system: MemorySystem, app: App?, witness: ReentrancyWitness) {
    _ = system.apps.count
    _ = system.terminations.count
    _ = system.ladderRuns.count
    _ = system.refusedAllocations.count
    _ = system.purgeLatency
    _ = system.targetBytes
    _ = system.monitor.level
    _ = system.monitor.latestSample
    if let app {
        _ = app.state
        _ = app.terminationReason
        _ = app.backgroundTimeRemaining
        _ = app.launchOptions
        _ = app.openBackgroundTaskCount
        _ = app.identifier
        _ = system.footprint(of: app.identifier)
        _ = system.app(app.identifier)
    }
    witness.reads.add(1, ordering: .relaxed)
}

/// What the user code saw.
final class ReentrancyWitness: Sendable {
    let reads = Atomic<Int>(0)
    let replacements = Atomic<Int>(0)
    let callsFromCallbacks = Atomic<Int>(0)
    let evictionsThatUsedTheirCache = Atomic<Int>(0)
    private let failureLog = SharedLog<String>()

    func fail(_ message: String) { failureLog.append(message) }
    var failures: [String] { failureLog.all }
}

/// An observer that, every so often, cancels its own token from inside its call and observes anew.
final class SelfReplacingObserver: Sendable {
    private let witness: ReentrancyWitness
    private let observe: @Sendable (SelfReplacingObserver) -> ObservationToken
    private let token = Mutex<ObservationToken?>(nil)
    private let calls = Atomic<Int>(0)

    init(witness: ReentrancyWitness, observe: @escaping @Sendable (SelfReplacingObserver) -> ObservationToken) {
        self.witness = witness
        self.observe = observe
    }

    func start() {
        let new = observe(self)
        token.withLock { $0 = new }
    }

    func stop() {
        token.withLock { $0.take() }?.cancel()
    }

    /// Runs `body`, and every 50th call replaces the observation from inside it.
    func called(_ body: () -> Void) {
        body()
        guard calls.add(1, ordering: .relaxed).newValue % 50 == 0 else { return }
        let old = token.withLock { $0.take() }
        guard let old else { return }
        old.cancel()
        start()
        witness.replacements.add(1, ordering: .relaxed)
    }
}

/// An app whose code calls back into its own app and the system from inside its callbacks.
final class ReentrantDelegate: AppDelegate {
    private let system: MemorySystem
    private let witness: ReentrancyWitness
    private let ballastBytes: Int
    private var ballast: [HeapBuffer] = []
    private var cache: PurgeableCache<Int, Int>?
    private var callbacks = 0

    init(system: MemorySystem, witness: ReentrancyWitness, ballastBytes: Int) {
        self.system = system
        self.witness = witness
        self.ballastBytes = ballastBytes
    }

    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        readEverything(system, app: app, witness: witness)
        let witness = witness
        // An eviction handler that reads and writes its own cache.
        let cacheBox = Mutex<PurgeableCache<Int, Int>?>(nil)
        let cache = try? PurgeableCache<Int, Int>(name: "reentrant", owner: app.identifier, category: .rebuildableObjects, countLimit: 64) { key, _ in
            guard let cache = cacheBox.withLock({ $0 }) else { return }
            _ = cache.count
            _ = cache.totalCost
            _ = cache.value(forKey: key &+ 1)
            try? cache.setValue(0, forKey: -1, cost: 1)
            _ = cache.removeValue(forKey: -1)
            witness.evictionsThatUsedTheirCache.add(1, ordering: .relaxed)
        }
        if let cache {
            cacheBox.withLock { $0 = cache }
            system.register(cache)
            for key in 0..<100 { try? cache.setValue(key, forKey: key, cost: 1) }
        }
        self.cache = cache
        do {
            let heap = try system.heap(for: app.identifier)
            ballast = try residentBuffers(in: heap, totalBytes: ballastBytes)
        } catch {
            // The budget may refuse ballast under pressure: that is the system working.
        }
        app.notificationCenter.addObserver(forName: nil) { app, _ in
            // A notification observer reads its own app and opens and ends a background task.
            _ = app.state
            if let task = try? app.beginBackgroundTask(expirationHandler: { _ in }) {
                try? app.endBackgroundTask(task)
            }
        }
    }

    func didBecomeActive(_ app: isolated App) {
        callBack(app)
    }

    func didEnterBackground(_ app: isolated App) {
        callBack(app)
        // Asks for time, and ends it from its own expiration handler.
        let box = Mutex<BackgroundTaskIdentifier?>(nil)
        let task = try? app.beginBackgroundTask { app in
            if let task = box.withLock({ $0 }) { try? app.endBackgroundTask(task) }
        }
        box.withLock { $0 = task }
        if callbacks % 2 == 0, let task { try? app.endBackgroundTask(task) }
    }

    func willEnterForeground(_ app: isolated App) {
        callBack(app)
    }

    func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning) {
        callBack(app)
        _ = cache?.purge(for: .warning)
    }

    func willTerminate(_ app: isolated App) {
        readEverything(system, app: app, witness: witness)
        // Asking for time in willTerminate is refused, with a typed error, not a crash.
        do {
            _ = try app.beginBackgroundTask { _ in }
            witness.fail("\(app.identifier): a background task began inside willTerminate")
        } catch {}
    }

    /// Reads everything, and asks its own app to move: terminate, come forward, open a task.
    private func callBack(_ app: isolated App) {
        callbacks += 1
        readEverything(system, app: app, witness: witness)
        witness.callsFromCallbacks.add(1, ordering: .relaxed)
        if let task = try? app.beginBackgroundTask(expirationHandler: { _ in }) {
            try? app.endBackgroundTask(task)
        }
        let unowned = UnownedApp(app)
        switch callbacks % 7 {
        case 0: Task { _ = try? await unowned.app.terminate(reason: .explicit) }
        case 3: Task { _ = try? await unowned.app.enterForeground() }
        case 5: Task { _ = try? await unowned.app.enterBackground() }
        default: break
        }
    }
}

/// An app passed to a task begun inside one of its callbacks.
private struct UnownedApp: Sendable {
    let app: App
    init(_ app: isolated App) { self.app = app }
}
