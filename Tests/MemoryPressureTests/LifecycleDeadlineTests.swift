#if canImport(Glibc)
import Glibc
#endif
import Dispatch
@testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Testing

@Suite(.timeLimit(.minutes(1)))
struct LifecycleDeadlineTests {
    @Test func overrunningDidEnterBackgroundTerminatesWithReasonDeadline() async throws {
        let gate = DispatchSemaphore(value: 0)
        let log = SharedLog<String>()
        let app = try makeApp("slow-save", log: log, configuration: .quick) { delegate in
            delegate.onDidEnterBackground = { _ in gate.wait() }
        }
        try await app.launch()
        let state = try await app.enterBackground()
        #expect(state == .notRunning)
        #expect(app.terminationReason == .deadline)
        gate.signal()
        // The run loop drains and the app can launch again; the overrun callback did not suspend it.
        log.clear()
        #expect(try await app.launch() == .active)
        #expect(log.all == ["willFinishLaunching", "didFinishLaunching", "didBecomeActive"])
    }

    @Test func overrunningWillTerminateEndsWithReasonDeadline() async throws {
        let gate = DispatchSemaphore(value: 0)
        let app = try makeApp("slow-exit", configuration: .quick) { delegate in
            delegate.onWillTerminate = { _ in gate.wait() }
        }
        try await app.launch()
        #expect(try await app.terminate(reason: .explicit) == .notRunning)
        #expect(app.terminationReason == .deadline)
        gate.signal()
    }

    @Test func aTransitionRequestedDuringWillTerminateIsRefused() async throws {
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let configuration = try AppConfiguration(terminationDeadline: .seconds(60))
        let app = try makeApp("exiting", configuration: configuration) { delegate in
            delegate.onWillTerminate = { _ in
                entered.signal()
                gate.wait()
            }
        }
        try await app.launch()
        async let termination = app.terminate(reason: .explicit)
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                entered.wait()
                continuation.resume()
            }
        }
        let error = await #expect(throws: MemoryPressureError.self) {
            try await app.enterBackground()
        }
        #expect(error?.code == .invalidTransition)
        #expect(error?.app == app.identifier)
        #expect(error?.description == "app \(app.identifier) cannot enterBackground while it is terminating")
        gate.signal()
        #expect(try await termination == .notRunning)
        #expect(app.terminationReason == .explicit)
    }

    @Test func aBackgroundTaskStillOpenAfterItsExpirationHandlerTerminatesTheApp() async throws {
        let log = SharedLog<String>()
        let events = EventSource<LifecycleEvent>()
        let stream = events.stream()
        let app = try makeApp("long-upload", log: log, configuration: .quickWithTimeForExpirationHandlers, events: events) { delegate in
            delegate.onDidEnterBackground = { app in
                _ = try? app.beginBackgroundTask { _ in log.append("expired") }
            }
        }
        try await app.launch()
        #expect(try await app.enterBackground() == .background)
        let terminated = await stream.first { if case .terminated = $0 { true } else { false } }
        #expect(terminated == .terminated(app: app.identifier, reason: .backgroundTaskExpired, state: .background))
        #expect(log.all.suffix(2) == ["didEnterBackground", "expired"])
        #expect(app.state == .notRunning)
    }

    /// The expiry wakes late when the machine is busy (here the clock is stepped past the whole
    /// background time at once, as a late wake finds it) and finds the app's run loop busy too:
    /// the expiration handlers still get their warning on the run loop before the app is ended.
    @Test func expirationHandlersRunEvenWhenTheExpiryWakesLate() async throws {
        let clock = ManualClock()
        let threads = AppThreadGroup(clock: clock)
        defer { threads.shutDown() }
        let log = SharedLog<String>()
        let limit = Duration.milliseconds(400)
        // A quarter of the time, as the handlers' warning comes before the end.
        let warning = limit / 4
        let delegate = RecordingDelegate(log: log)
        delegate.onDidEnterBackground = { app in
            _ = try? app.beginBackgroundTask { _ in log.append("expired") }
        }
        let app = App(
            identifier: .test("late-expiry"), delegate: delegate, configuration: try AppConfiguration(backgroundTaskTimeLimit: limit),
            events: nil, threads: threads
        )
        try await app.launch()
        #expect(try await app.enterBackground() == .background)

        // The run loop busy with the app's code; the expiry wakes only past the end of the time.
        let busy = DispatchSemaphore(value: 0)
        app.enqueue { _ in _ = busy.wait(timeout: .now() + 60) }
        clock.step(by: limit + .milliseconds(100))
        // At that instant the app still runs: its handlers are owed their warning first.
        #expect(await threads.timers.haveLookedAtTheTimeNow())
        #expect(app.state == .background)
        busy.signal()
        #expect(await eventually { log.all.contains("expired") })
        // A warning after the late wake, the end.
        clock.step(by: warning)
        #expect(await eventually { app.state == .notRunning })
        #expect(app.terminationReason == .backgroundTaskExpired)
        #expect(log.all.suffix(2) == ["didEnterBackground", "expired"])
    }

    @Test func anExpirationHandlerThatEndsItsTaskLetsTheAppSuspend() async throws {
        let events = EventSource<LifecycleEvent>()
        let stream = events.stream()
        let task = SharedBox<BackgroundTaskIdentifier?>(nil)
        let app = try makeApp("tidy-upload", configuration: .quickWithTimeForExpirationHandlers, events: events) { delegate in
            delegate.onDidEnterBackground = { app in
                task.value = try? app.beginBackgroundTask { app in
                    if let open = task.value { try? app.endBackgroundTask(open) }
                }
            }
        }
        try await app.launch()
        #expect(try await app.enterBackground() == .background)
        let suspended = await stream.first { $0 == .stateChanged(app: app.identifier, from: .background, to: .suspended) }
        #expect(suspended != nil)
        #expect(app.state == .suspended)
        #expect(app.terminationReason == nil)
    }

    @Test func endingTheLastBackgroundTaskSuspendsABackgroundApp() async throws {
        let task = SharedBox<BackgroundTaskIdentifier?>(nil)
        let app = try makeApp("short-upload", configuration: .default) { delegate in
            delegate.onDidEnterBackground = { app in task.value = try? app.beginBackgroundTask { _ in } }
        }
        try await app.launch()
        #expect(try await app.enterBackground() == .background)
        #expect(app.openBackgroundTaskCount == 1)
        try app.endBackgroundTask(try #require(task.value))
        #expect(app.state == .suspended)
    }
}
