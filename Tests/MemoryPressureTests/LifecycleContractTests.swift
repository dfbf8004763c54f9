import Dispatch
@_spi(Benchmarks) @testable import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import Testing

/// Issue 16, "The lifecycle contract, exact and race-free": one test for each of its eleven items,
/// against real apps hosted by a real `MemorySystem` (and its ladder, under real pressure, where an
/// item is about reclamation). The waits are bounded only so that a broken test cannot hang; no
/// test asserts how long anything took.
@Suite(.serialized, .exclusiveMemoryUse, .timeLimit(.minutes(3)))
struct LifecycleContractTests {
    /// A system that is never under pressure: its target is 1 GiB above the process's footprint.
    static func quietSystem() throws -> MemorySystem {
        try MemorySystem(configuration: .test(targetBytes: settledResidentBytes() + 1024 * mebibyte, logger: silentLogger))
    }

    /// Time limits an app's code never reaches, with background time `backgroundTime`.
    static func patient(backgroundTime: Duration = .seconds(600)) throws -> AppConfiguration {
        try AppConfiguration(
            launchDeadline: .seconds(60), backgroundDeadline: .seconds(60), terminationDeadline: .seconds(60),
            backgroundTaskTimeLimit: backgroundTime
        )
    }

    // MARK: 3. Nothing after willTerminate

    @Test func nothingMovesAnAppOutOfItsTermination() async throws {
        let system = try Self.quietSystem()
        let lifecycle = system.lifecycleEvents.stream()
        let configuration = try Self.patient()

        // willTerminate may not ask for time, and ending its last task there does not suspend it;
        // what it posts to itself is never delivered.
        let log = SharedLog<String>()
        let task = SharedBox<BackgroundTaskIdentifier?>(nil)
        let closing = try system.register(.test("closing"), configuration: configuration) {
            let delegate = StateReadingDelegate(log: log)
            delegate.hooks[.didFinishLaunching] = { app in
                app.notificationCenter.addObserver(forName: nil) { _, notification in log.append("observer \(notification.name)") }
            }
            delegate.hooks[.didEnterBackground] = { app in task.value = try? app.beginBackgroundTask { _ in } }
            delegate.hooks[.willTerminate] = { app in
                do {
                    _ = try app.beginBackgroundTask { _ in }
                    log.append("began a task")
                } catch {
                    log.append("refused: \(error)")
                }
                app.notificationCenter.post(name: "late")
                if let open = task.value { try? app.endBackgroundTask(open) }
                log.append("after ending the last task: \(app.systemState)")
            }
            return delegate
        }
        try await closing.launch()
        #expect(try await closing.enterBackground() == .background)
        _ = log.take()
        #expect(try await closing.terminate(reason: .explicit) == .notRunning)
        #expect(log.all == [
            "willTerminate background",
            "refused: app closing cannot beginBackgroundTask while it is terminating",
            "after ending the last task: background",
        ])
        let closingRecord = await system.terminationRecord(of: closing.identifier)
        #expect(closingRecord?.state == .background)
        #expect(closingRecord?.reason == .explicit)

        // A termination asked for while didEnterBackground runs (as the ladder's, of a background
        // app) is not undone by the suspension that would have followed: willTerminate runs in the
        // background, and the app is terminated from there.
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let interruptedLog = SharedLog<String>()
        let interrupted = try system.register(.test("interrupted"), configuration: configuration) {
            let delegate = StateReadingDelegate(log: interruptedLog)
            delegate.hooks[.didEnterBackground] = { _ in
                entered.signal()
                _ = gate.wait(timeout: .now() + 60)
            }
            return delegate
        }
        try await interrupted.launch()
        async let entering = interrupted.enterBackground()
        #expect(await Self.wait(for: entered))
        let terminator = system.terminator
        async let termination = terminator.terminate(
            interrupted, reason: .systemPressure, step: .terminateBackground, from: [.background]
        )
        #expect(await eventually { interrupted.record.withLock { $0.isTerminating } })
        gate.signal()
        _ = try? await entering
        let record = await termination
        #expect(interrupted.state == .notRunning)
        #expect(interruptedLog.all.suffix(2) == ["didEnterBackground background", "willTerminate background"])
        #expect(record?.state == .background)
        #expect(record?.reason == .systemPressure)

        var suspensions: [AppIdentifier] = []
        for await event in lifecycle {
            if case .stateChanged(let app, _, .suspended) = event { suspensions.append(app) }
            if case .released(let app) = event, app == interrupted.identifier { break }
        }
        #expect(suspensions.isEmpty)
    }

    /// Waits, off the cooperative pool, until `semaphore` is signalled; false after 30 s.
    static func wait(for semaphore: DispatchSemaphore) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: semaphore.wait(timeout: .now() + 30) == .success)
            }
        }
    }
}

/// An app's code that records each callback with the state ``App/state`` reads there in `log`
/// (`"didEnterBackground background"`) and the state the system has moved the app to in
/// `systemLog`, then runs the hook a test set for it.
final class StateReadingDelegate: AppDelegate {
    let log: SharedLog<String>
    let systemLog: SharedLog<String>
    var hooks: [LifecycleCallback: @Sendable (isolated App) -> Void] = [:]
    /// Runs in `didFinishLaunching`, with the launch options, before its hook.
    var onLaunch: (@Sendable (isolated App, LaunchOptions) -> Void)?

    init(log: SharedLog<String> = SharedLog(), systemLog: SharedLog<String> = SharedLog()) {
        self.log = log
        self.systemLog = systemLog
    }

    private func record(_ callback: LifecycleCallback, _ app: isolated App) {
        log.append("\(callback) \(app.state)")
        systemLog.append("\(callback) \(app.systemState)")
        hooks[callback]?(app)
    }

    func willFinishLaunching(_ app: isolated App, options: LaunchOptions) { record(.willFinishLaunching, app) }
    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        onLaunch?(app, options)
        record(.didFinishLaunching, app)
    }
    func didBecomeActive(_ app: isolated App) { record(.didBecomeActive, app) }
    func willResignActive(_ app: isolated App) { record(.willResignActive, app) }
    func didEnterBackground(_ app: isolated App) { record(.didEnterBackground, app) }
    func willEnterForeground(_ app: isolated App) { record(.willEnterForeground, app) }
    func willTerminate(_ app: isolated App) { record(.willTerminate, app) }
    func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning) { record(.didReceiveMemoryWarning, app) }
}
extension MemorySystem {
    /// The record of `app`'s last termination, once its run loop has let go of its memory; nil if
    /// none comes within `limit`.
    func terminationRecord(of app: AppIdentifier, within limit: Duration = .seconds(30)) async -> TerminationRecord? {
        _ = await eventually(within: limit) { terminations.contains { $0.app == app } }
        return terminations.last { $0.app == app }
    }
}
