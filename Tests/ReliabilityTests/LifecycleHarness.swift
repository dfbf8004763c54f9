@_spi(Benchmarks) @testable import MemoryPressure
import MemoryPressureTestKit

extension RecordingDelegate {
    /// A delegate recording each callback in `log` that, once its app has launched, also records
    /// every notification the app receives there.
    static func recordingNotifications(in log: SharedLog<String>) -> RecordingDelegate {
        let delegate = RecordingDelegate(log: log)
        delegate.onDidFinishLaunching = { app, _ in
            app.notificationCenter.addObserver(forName: nil) { _, notification in
                switch notification.payload {
                case .delta(let delta): log.append("notification \(notification.name) delta \(delta) x\(notification.postCount)")
                default: log.append("notification \(notification.name)")
                }
            }
        }
        return delegate
    }
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

    static let configuration = try! AppConfiguration(
        // The delegates never block, so these deadlines are never reached, even on a loaded machine;
        // the background-task limit outlasts any run (expiry has its own fault tests).
        backgroundDeadline: .seconds(10), terminationDeadline: .seconds(10), backgroundTaskTimeLimit: .seconds(3600)
    )

    init(identifiers: [AppIdentifier]) async throws {
        let lifecycleEvents = EventSource<LifecycleEvent>()
        events = lifecycleEvents.stream().makeAsyncIterator()
        logs = identifiers.map { _ in SharedLog() }
        apps = zip(identifiers, logs).map { identifier, log in
            App(identifier: identifier, delegate: RecordingDelegate.recordingNotifications(in: log), configuration: Self.configuration, events: lifecycleEvents)
        }
        tasks = identifiers.map { _ in [:] }
        sentinel = App(identifier: try AppIdentifier("sentinel"), delegate: RecordingDelegate.recordingNotifications(in: SharedLog()), events: lifecycleEvents)
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
                _ = await apps[index].launchOptions
            case .beginBackgroundTask(let index):
                let identifier = try apps[index].beginBackgroundTask { _ in }
                tasks[index][identifier.rawValue] = identifier
                task = identifier.rawValue
            case .endBackgroundTask(let index, let task):
                try apps[index].endBackgroundTask(tasks[index][task] ?? BackgroundTaskIdentifier(rawValue: task))
            case .post(let index, let name, let delta):
                apps[index].notificationCenter.post(name: LifecycleModel.notificationName(name), payload: .delta(delta))
                // Delivery is posted to the run loop: wait for it by running on the app's executor.
                _ = await apps[index].launchOptions
            case .memoryWarning:
                _ = await MemoryWarning(level: .warning).deliver(to: apps) { _ in 0 }
            }
        } catch let caught {
            error = caught
        }
        let stepEvents = await collectUntilSentinel()
        return StepOutcome(
            states: apps.map(\.state),
            events: apps.map { app in stepEvents.filter { $0.app == app.identifier } },
            logs: logs.map { $0.take() },
            error: error,
            task: task
        )
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
