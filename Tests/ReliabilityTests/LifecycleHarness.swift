@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
import MemoryPressureTestKit

extension RecordingDelegate {
    /// A delegate recording each callback in `log` that, once its app has launched, also records
    /// every notification the app receives there.
    static func recordingNotifications(in log: SharedLog<String>) -> RecordingDelegate {
        let delegate = RecordingDelegate(log: log)
        delegate.onDidFinishLaunching = { app, _ in
            app.notificationCenter.addObserver(forName: nil) { _, notification in log.append(line(for: notification)) }
        }
        return delegate
    }

    /// What the observer records for `notification`.
    static func line(for notification: AppNotification) -> String {
        switch notification.payload {
        case .delta(let delta): "notification \(notification.name) delta \(delta) x\(notification.postCount)"
        default: "notification \(notification.name)"
        }
    }
}

/// The code of the model's apps: records in `log` each callback with the state ``App/state``
/// reads there and, once launched, every notification the app receives. Its `willTerminate` asks
/// for a background task, ends every open one (noting the state then) and posts a notification to
/// itself, which must never be delivered.
final class ModelDelegate: AppDelegate {
    let log: SharedLog<String>

    init(log: SharedLog<String>) {
        self.log = log
    }

    private func record(_ callback: LifecycleCallback, _ app: isolated App) {
        log.append("\(callback) \(app.state)")
    }

    func willFinishLaunching(_ app: isolated App, options: LaunchOptions) { record(.willFinishLaunching, app) }

    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        record(.didFinishLaunching, app)
        let log = log
        app.notificationCenter.addObserver(forName: nil) { _, notification in
            log.append(RecordingDelegate.line(for: notification))
        }
    }

    func didBecomeActive(_ app: isolated App) { record(.didBecomeActive, app) }
    func willResignActive(_ app: isolated App) { record(.willResignActive, app) }
    func didEnterBackground(_ app: isolated App) { record(.didEnterBackground, app) }
    func willEnterForeground(_ app: isolated App) { record(.willEnterForeground, app) }

    func willTerminate(_ app: isolated App) {
        record(.willTerminate, app)
        let began = (try? app.beginBackgroundTask { _ in }) != nil
        log.append("beginBackgroundTask \(began ? "began" : "refused")")
        let open = app.record.withLock { $0.machine.backgroundTasks.keys.sorted { $0.rawValue < $1.rawValue } }
        for task in open { try? app.endBackgroundTask(task) }
        log.append("ended \(open.count), still \(app.systemState)")
        app.notificationCenter.post(name: LifecycleModel.notificationName(9), payload: .delta(1))
    }

    func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning) { record(.didReceiveMemoryWarning, app) }
}

/// Real apps driven by the same steps as the model, observed through their delegates, observers
/// and a shared `EventSource<LifecycleEvent>` stream.
///
/// Events are decided when a transition is requested and when its callbacks run, so after a step a
/// sentinel app (not part of the run) toggles between active and inactive: every event of the step
/// comes before the sentinel's, and reading up to the sentinel's callback collects exactly the step's.
final class LifecycleHarness {
    let apps: [App]
    private let logs: [SharedLog<String>]
    private let sentinel: App
    private var events: AsyncStream<LifecycleEvent>.Iterator
    private var tasks: [[Int: BackgroundTaskIdentifier]]
    /// Each app's stays in the background seen so far, numbered from 1 by when they began.
    private var stays: [[ContinuousClock.Instant: Int]]

    /// The threads of the harnesses' apps, which no memory system hosts: one group for them all.
    static let threads = AppThreadGroup.forTheProcessLifetime()

    static let configuration = try! AppConfiguration(
        // The delegates never block, so these deadlines are never reached, even on a loaded machine;
        // the background time outlasts any run, so the model can say when it counts without it
        // running out at random (expiry has its own fault tests).
        backgroundDeadline: .seconds(10), terminationDeadline: .seconds(10), backgroundTaskTimeLimit: .seconds(3600)
    )

    init(identifiers: [AppIdentifier]) async throws {
        let lifecycleEvents = EventSource<LifecycleEvent>()
        events = lifecycleEvents.stream().makeAsyncIterator()
        logs = identifiers.map { _ in SharedLog() }
        apps = zip(identifiers, logs).map { identifier, log in
            App(identifier: identifier, delegate: ModelDelegate(log: log), configuration: Self.configuration, events: lifecycleEvents, threads: Self.threads)
        }
        tasks = identifiers.map { _ in [:] }
        stays = identifiers.map { _ in [:] }
        sentinel = App(identifier: try AppIdentifier("sentinel"), delegate: ModelDelegate(log: SharedLog()), events: lifecycleEvents, threads: Self.threads)
        try await sentinel.launch()
        _ = await collectUntilSentinel()
    }

    /// Applies `operation` and reports what every app showed.
    func apply(_ operation: LifecycleOperation) async -> StepOutcome {
        var error: MemoryPressureError?
        var task: Int?
        do throws(MemoryPressureError) {
            switch operation {
            case .launch(let index, let inBackground):
                try await apps[index].launch(options: LaunchOptions(reason: inBackground ? .backgroundEvent("fetch") : .user))
            case .deactivate(let index): try await apps[index].deactivate()
            case .activate(let index): try await apps[index].activate()
            case .enterBackground(let index): try await apps[index].enterBackground()
            case .enterForeground(let index): try await apps[index].enterForeground()
            case .suspend(let index): try await apps[index].suspend()
            case .terminate(let index):
                try await apps[index].terminate(reason: .explicit)
                // The app lets go of its controllers on its run loop: wait for it there.
                await apps[index].drained(within: .seconds(30))
            case .beginBackgroundTask(let index):
                let identifier = try apps[index].beginBackgroundTask { _ in }
                tasks[index][identifier.rawValue] = identifier
                task = identifier.rawValue
            case .endBackgroundTask(let index, let task):
                try apps[index].endBackgroundTask(tasks[index][task] ?? BackgroundTaskIdentifier(rawValue: task))
            case .post(let index, let name, let delta):
                apps[index].notificationCenter.post(name: LifecycleModel.notificationName(name), payload: .delta(delta))
                // Delivery is posted to the run loop: wait for it there.
                await apps[index].drained(within: .seconds(30))
            case .memoryWarning:
                _ = await MemoryWarning(level: .warning).deliver(to: apps) { _ in 0 }
            }
        } catch let caught {
            error = caught
        }
        // Each app's events are delivered in order but apart from other apps': all of them are out
        // before the sentinel's, which closes the step.
        for app in apps { await app.eventsDelivered() }
        let stepEvents = await collectUntilSentinel()
        return StepOutcome(
            states: apps.map(\.state),
            events: apps.map { app in stepEvents.filter { $0.app == app.identifier } },
            logs: logs.map { $0.take() },
            stays: apps.indices.map(stay(of:)),
            error: error,
            task: task
        )
    }

    /// The number of the stay in the background whose time app `index` is counting now, or nil
    /// when none is; -1 when ``App/backgroundTimeRemaining`` disagrees.
    private func stay(of index: Int) -> Int? {
        let since = apps[index].record.withLock { $0.machine.backgroundSince }
        guard (since == nil) == (apps[index].backgroundTimeRemaining == nil) else { return -1 }
        guard let since else { return nil }
        if let stay = stays[index][since] { return stay }
        stays[index][since] = stays[index].count + 1
        return stays[index].count
    }

    /// Toggles the sentinel and returns the events that came before its own.
    private func collectUntilSentinel() async -> [LifecycleEvent] {
        let callback: LifecycleCallback
        do {
            if sentinel.state == .active {
                try await sentinel.deactivate()
                callback = .willResignActive
            } else {
                try await sentinel.activate()
                callback = .didBecomeActive
            }
        } catch {
            preconditionFailure("the sentinel only toggles between active and inactive: \(error)")
        }
        var collected: [LifecycleEvent] = []
        while let event = await events.next() {
            if event == .callback(app: sentinel.identifier, callback) { break }
            if event.app != sentinel.identifier { collected.append(event) }
        }
        return collected
    }

    /// Terminates every app still running, cancelling their background-task timers.
    func shutDown() async {
        for app in apps + [sentinel] where app.state != .notRunning {
            _ = try? await app.terminate(reason: .explicit)
        }
    }
}
