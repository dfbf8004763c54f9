import Dispatch
@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
import MemoryPressureSimulation
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import Testing

/// Thousands of seeded random steps, each a handful of operations run at once on a real
/// `MemorySystem` whose ladder terminates under real pressure: launches, `enterForeground` and
/// `enterBackground`, interruptions, background tasks begun and ended, notifications posted, memory
/// warnings, and terminations for pressure through the system's terminator of an app in the state it
/// was chosen in, as the ladder makes them. After every step, the contract of issue 16:
/// - no active or inactive app was terminated for pressure;
/// - no app code ran while its app was suspended: each delegate callback, observer, expiration
///   handler, eviction handler and discard callback reads the system's state as it begins and as it
///   ends, and neither may be `suspended`;
/// - every app's callbacks come in a valid order, each reading `state` as UIKit reports it there.
///
/// The operations of a step are seeded; how they interleave is up to the threads.
@Suite(.timeLimit(.minutes(5)), .exclusiveMemoryUse)
struct LifecycleInterleavingTests {
    static let seeds: [UInt64] = [3, 7, 11, 19, 29, 47, 61, 83]
    static let stepsPerSeed = 300
    /// Each app's heap ballast: together more than the pressure the budget allows.
    static let ballastMebibytes = [4, 8, 12, 16, 20]

    /// Deadlines the apps never reach (their code never blocks); background time short enough for
    /// some background tasks to expire during a run, so expiration handlers run among the rest.
    static let configuration = try! AppConfiguration(
        launchDeadline: .seconds(30), backgroundDeadline: .seconds(30), terminationDeadline: .seconds(30),
        backgroundTaskTimeLimit: .milliseconds(400)
    )

    /// Warning at 80 % of the budget, critical at 81 %, target 78 %: the ladder terminates as soon as
    /// the apps hold more than a few MiB above the target, whatever the process's own size.
    static let thresholds = try! MemoryBudget.Thresholds(
        warning: 0.80, critical: 0.81, warningRecovery: 0.78, criticalRecovery: 0.79
    )

    @Test func randomInterleavingsKeepTheLifecycleContract() async throws {
        var pressureTerminations = 0
        var ladderTerminations = 0
        var steps = 0
        for seed in Self.seeds {
            let run = try await Self.run(seed: seed)
            steps += run.steps
            pressureTerminations += run.pressureTerminations
            ladderTerminations += run.ladderTerminations
            guard run.steps == Self.stepsPerSeed else { return }
        }
        #expect(steps == Self.seeds.count * Self.stepsPerSeed)
        // The runs did exercise terminations for pressure, the ladder's among them.
        #expect(pressureTerminations > 0)
        #expect(ladderTerminations > 0)
    }

    struct RunResult {
        var steps: Int
        var pressureTerminations: Int
        var ladderTerminations: Int
    }

    /// One seed's run; stops at the first step after which a promise is broken, and records it.
    static func run(seed: UInt64) async throws -> RunResult {
        var random = SplitMix64(seed: seed)
        let baseline = try settledResidentBytes()
        let system = try MemorySystem(configuration: .test(targetBytes: baseline + 16 * mebibyte, thresholds: thresholds, logger: silentLogger))
        let witness = ContractWitness()
        let observation = system.lifecycleEvents.observe { witness.observe($0) }
        let apps = try ballastMebibytes.enumerated().map { index, mebibytes in
            try system.register(.test("app\(index)"), configuration: configuration) { [system, witness] in
                InterleavingDelegate(system: system, witness: witness, ballastBytes: mebibytes * mebibyte)
            }
        }
        let driver = Driver(system: system, apps: apps)
        var completed = 0
        try await system.running {
            for step in 0..<stepsPerSeed {
                let operations = (0..<Int.random(in: 2...4, using: &random)).map { _ in
                    Operation.random(appCount: apps.count, using: &random)
                }
                await withTaskGroup(of: Void.self) { group in
                    for operation in operations {
                        group.addTask { await driver.perform(operation) }
                    }
                }
                let violations = witness.takeViolations()
                guard violations.isEmpty else {
                    Issue.record("""
                        seed \(seed), step \(step) (\(operations.map(\.description).joined(separator: " | "))):
                        \(violations.joined(separator: "\n"))
                        """)
                    return
                }
                completed += 1
            }
        }
        await system.shutDown()
        for app in apps { await app.drained(within: .seconds(10)) }
        let violations = witness.takeViolations()
        if !violations.isEmpty {
            Issue.record("seed \(seed), after the run: \(violations.joined(separator: "\n"))")
            completed -= 1
        }
        withExtendedLifetime(observation) {}
        let ladder = system.ladderRuns.flatMap(\.steps).filter { $0.step == .terminateSuspended || $0.step == .terminateBackground }
        return RunResult(
            steps: completed, pressureTerminations: witness.pressureTerminations,
            ladderTerminations: ladder.reduce(0) { $0 + $1.terminated.count }
        )
    }
}

/// One thing a step does.
enum Operation: CustomStringConvertible, Sendable {
    case launch(app: Int, inBackground: Bool)
    case enterForeground(app: Int)
    case enterBackground(app: Int)
    case deactivate(app: Int)
    case activate(app: Int)
    case beginBackgroundTask(app: Int)
    case endBackgroundTask(app: Int)
    case post(app: Int, delta: Int)
    case memoryWarning
    /// Terminate the app for pressure if it is suspended or in the background when chosen, only in
    /// that state, as the ladder does.
    case terminateForPressure(app: Int)

    static func random(appCount: Int, using random: inout some RandomNumberGenerator) -> Operation {
        let app = Int.random(in: 0..<appCount, using: &random)
        return switch Int.random(in: 0..<100, using: &random) {
        case 0..<14: .launch(app: app, inBackground: Int.random(in: 0..<4, using: &random) == 0)
        case 14..<30: .enterForeground(app: app)
        case 30..<46: .enterBackground(app: app)
        case 46..<49: .deactivate(app: app)
        case 49..<52: .activate(app: app)
        case 52..<64: .beginBackgroundTask(app: app)
        case 64..<76: .endBackgroundTask(app: app)
        case 76..<88: .post(app: app, delta: Int.random(in: -3...3, using: &random))
        case 88..<91: .memoryWarning
        default: .terminateForPressure(app: app)
        }
    }

    var description: String {
        switch self {
        case .launch(let app, let inBackground): "launch(app\(app)\(inBackground ? ", background" : ""))"
        case .enterForeground(let app): "enterForeground(app\(app))"
        case .enterBackground(let app): "enterBackground(app\(app))"
        case .deactivate(let app): "deactivate(app\(app))"
        case .activate(let app): "activate(app\(app))"
        case .beginBackgroundTask(let app): "beginBackgroundTask(app\(app))"
        case .endBackgroundTask(let app): "endBackgroundTask(app\(app))"
        case .post(let app, let delta): "post(app\(app), \(delta))"
        case .memoryWarning: "memoryWarning"
        case .terminateForPressure(let app): "terminateForPressure(app\(app))"
        }
    }
}

/// Carries out operations on the system's apps; a refused transition is part of the game.
final class Driver: Sendable {
    let system: MemorySystem
    let apps: [App]
    /// The background tasks the driver opened and has not ended, by app.
    private let tasks: Mutex<[[BackgroundTaskIdentifier]]>

    init(system: MemorySystem, apps: [App]) {
        self.system = system
        self.apps = apps
        tasks = Mutex(apps.map { _ in [] })
    }

    func perform(_ operation: Operation) async {
        do throws(MemoryPressureError) {
            switch operation {
            case .launch(let index, let inBackground):
                try await apps[index].launch(options: LaunchOptions(reason: inBackground ? .backgroundEvent("fetch") : .user))
            case .enterForeground(let index): try await apps[index].enterForeground()
            case .enterBackground(let index): try await apps[index].enterBackground()
            case .deactivate(let index): try await apps[index].deactivate()
            case .activate(let index): try await apps[index].activate()
            case .beginBackgroundTask(let index):
                let task = try apps[index].beginBackgroundTask { app in
                    // Half the handlers end their task, half leave it to expire.
                    app.expirationHandlerRan()
                }
                tasks.withLock { $0[index].append(task) }
            case .endBackgroundTask(let index):
                guard let task = tasks.withLock({ $0[index].popLast() }) else { return }
                try apps[index].endBackgroundTask(task)
            case .post(let index, let delta):
                apps[index].notificationCenter.post(name: "changed", payload: .delta(delta))
            case .memoryWarning:
                _ = await MemoryWarning(level: .warning).deliver(to: apps) { _ in 0 }
            case .terminateForPressure(let index):
                let app = apps[index]
                let chosen = app.systemState
                guard chosen == .suspended || chosen == .background else { return }
                _ = await system.terminator.terminate(
                    app, reason: .systemPressure, step: chosen == .suspended ? .terminateSuspended : .terminateBackground,
                    from: [chosen]
                )
            }
        } catch {
            // Refused: the app was not in a state that allows it, or is terminating.
        }
    }
}

extension App {
    /// What an expiration handler of the interleaving test does: report itself and, for one task in
    /// two, end every open task of the app.
    func expirationHandlerRan() {
        (delegate as? InterleavingDelegate)?.expirationHandlerRan(self)
    }
}

/// An app's code: holds heap ballast, a cache with an eviction handler and discardable content,
/// and a notification observer; every piece of it reports to the witness as it runs.
final class InterleavingDelegate: AppDelegate {
    let system: MemorySystem
    let witness: ContractWitness
    let ballastBytes: Int
    private var ballast: [HeapBuffer] = []
    private var cache: PurgeableCache<Int, any Sendable>?
    private var nextKey = 0
    private var expirations = 0

    init(system: MemorySystem, witness: ContractWitness, ballastBytes: Int) {
        self.system = system
        self.witness = witness
        self.ballastBytes = ballastBytes
    }

    func willFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        witness.callback(.willFinishLaunching, of: app) {}
    }

    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        witness.callback(.didFinishLaunching, of: app) {
            if let heap = try? system.heap(for: app.identifier) {
                // Under pressure an allocation may be refused: the app holds what it was given.
                for _ in 0..<(ballastBytes / mebibyte) {
                    guard let buffer = try? heap.allocate(byteCount: mebibyte) else { break }
                    buffer.withUnsafeMutableBytes(touchEveryPage)
                    ballast.append(buffer)
                }
            }
            let witness = witness
            let cache = try? PurgeableCache<Int, any Sendable>(
                name: "items", owner: app.identifier, category: .rebuildableObjects, costLimit: 64 * 1024
            ) { [app] _, _ in
                witness.ran("eviction handler", of: app)
            }
            if let cache { system.register(cache) }
            self.cache = cache
            refill(app)
            app.notificationCenter.addObserver(forName: nil) { app, _ in
                witness.ran("observer", of: app) {
                    (app.delegate as? InterleavingDelegate)?.refill(app)
                }
            }
        }
    }

    func didBecomeActive(_ app: isolated App) {
        witness.callback(.didBecomeActive, of: app) { refill(app) }
    }

    func willResignActive(_ app: isolated App) {
        witness.callback(.willResignActive, of: app) {}
    }

    func didEnterBackground(_ app: isolated App) {
        witness.callback(.didEnterBackground, of: app) {}
    }

    func willEnterForeground(_ app: isolated App) {
        witness.callback(.willEnterForeground, of: app) { refill(app) }
    }

    func willTerminate(_ app: isolated App) {
        witness.callback(.willTerminate, of: app) {}
    }

    func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning) {
        witness.callback(.didReceiveMemoryWarning, of: app) {}
    }

    func expirationHandlerRan(_ app: isolated App) {
        witness.ran("expiration handler", of: app) {
            expirations += 1
            guard expirations.isMultiple(of: 2) else { return }
            // End every task still open, whoever opened it: a handler may end tasks it did not open.
            for task in app.openBackgroundTasks { try? app.endBackgroundTask(task) }
        }
    }

    /// Tops the cache up with a few entries, one in three discardable content.
    func refill(_ app: isolated App) {
        guard let cache else { return }
        for _ in 0..<6 {
            nextKey += 1
            let value: any Sendable = nextKey.isMultiple(of: 3) ? WitnessedContent(app: app, witness: witness) : nextKey
            try? cache.setValue(value, forKey: nextKey, cost: 1024)
        }
    }
}

extension App {
    /// The identifiers of the open background tasks.
    nonisolated var openBackgroundTasks: [BackgroundTaskIdentifier] {
        record.withLock { Array($0.machine.backgroundTasks.keys) }
    }
}

/// Discardable content whose discard callback, app code run by a purge, reports to the witness.
final class WitnessedContent: DiscardableContent {
    let app: App
    let witness: ContractWitness
    private let access = ContentAccessCount()

    init(app: App, witness: ContractWitness) {
        self.app = app
        self.witness = witness
    }

    func beginContentAccess() -> Bool { access.begin() }
    func endContentAccess() { access.end() }
    func discardContentIfPossible() {
        witness.ran("discard callback", of: app) { access.discardIfPossible() }
    }
    var isContentDiscarded: Bool { access.isDiscarded }
}

/// What the apps' code saw and what the system did, from the apps' run loops, the reclamation
/// executor and the driver's tasks; the violations of the contract, taken after every step.
final class ContractWitness: Sendable {
    private struct State {
        var violations: [String] = []
        var orders: [AppIdentifier: CallbackSequence] = [:]
        var pressureTerminations = 0
    }

    private let state = Mutex(State())

    /// The violations since the last call.
    func takeViolations() -> [String] {
        state.withLock { state in
            defer { state.violations = [] }
            return state.violations
        }
    }

    var pressureTerminations: Int { state.withLock { $0.pressureTerminations } }

    private func violation(_ message: String) {
        state.withLock { $0.violations.append(message) }
    }

    /// Runs `body`, app code of `app` named `what`, checking the system's state of the app as it
    /// begins and as it ends: never suspended.
    func ran(_ what: String, of app: App, _ body: () -> Void = {}) {
        let entry = app.systemState
        body()
        let exit = app.systemState
        if entry == .suspended || exit == .suspended {
            violation("\(app.identifier): \(what) ran while suspended (began \(entry), ended \(exit))")
        }
    }

    /// A delegate callback: `state` as UIKit reads it there, and app code like any other.
    func callback(_ callback: LifecycleCallback, of app: isolated App, _ body: () -> Void) {
        let reported = app.state
        if !Self.uiKitReading(of: callback).contains(reported) {
            violation("\(app.identifier): state read \(reported) in \(callback)")
        }
        ran("\(callback)", of: app, body)
    }

    /// What `applicationState` may read inside `callback`.
    static func uiKitReading(of callback: LifecycleCallback) -> Set<AppState> {
        switch callback {
        case .willFinishLaunching, .didFinishLaunching: [.inactive, .background]
        case .didBecomeActive, .willResignActive: [.active]
        case .didEnterBackground, .willEnterForeground: [.background]
        case .willTerminate, .didReceiveMemoryWarning: [.inactive, .active, .background]
        }
    }

    /// Follows the lifecycle events, synchronously, under the emitting app's lock.
    func observe(_ event: LifecycleEvent) {
        state.withLock { state in
            switch event {
            case .terminated(let app, .systemPressure, let from):
                state.pressureTerminations += 1
                if from == .active || from == .inactive {
                    state.violations.append("\(app) was terminated for system pressure while \(from)")
                }
            case .callback(let app, let callback):
                if let problem = state.orders[app, default: CallbackSequence()].accept(callback) {
                    state.violations.append("\(app): \(problem)")
                }
            case .released(let app):
                state.orders[app, default: CallbackSequence()].released()
            case .stateChanged, .delivered, .terminated, .restorationFailed:
                break
            }
        }
    }
}
