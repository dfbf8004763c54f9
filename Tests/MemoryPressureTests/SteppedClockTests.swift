@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Testing

/// The lifecycle's timing on a manual clock (issue 36, "time that tests can step"): background time,
/// its expiration handlers and its end run when the clock is stepped to them, never before, and the
/// test sleeps for nothing.
struct SteppedClockTests {
    @Test func backgroundTimeRunsOutWhenTheClockIsSteppedThere() async throws {
        let clock = ManualClock()
        let threads = AppThreadGroup(clock: clock)
        defer { threads.shutDown() }
        let log = SharedLog<String>()
        let task = SharedBox<BackgroundTaskIdentifier?>(nil)
        let delegate = RecordingDelegate(log: log)
        delegate.onDidEnterBackground = { app in
            task.value = try? app.beginBackgroundTask { _ in log.append("expired") }
        }
        // Ten seconds of background time: its handlers' turn comes a second before the end.
        let configuration = try AppConfiguration(backgroundTaskTimeLimit: .seconds(10))
        let app = App(identifier: .test("stepped"), delegate: delegate, configuration: configuration, threads: threads)
        try await app.launch()
        #expect(try await app.enterBackground() == .background)
        #expect(app.backgroundTimeRemaining == .seconds(10))

        // Just before the handlers' turn: nothing, however long the machine takes.
        clock.step(by: .milliseconds(8_999))
        #expect(await threads.timers.haveLookedAtTheTimeNow())
        #expect(!log.all.contains("expired"))
        #expect(app.backgroundTimeRemaining == .milliseconds(1_001))
        #expect(app.state == .background)

        // The handlers' turn: the expiration handler runs, and the app still runs.
        clock.step(by: .milliseconds(1))
        #expect(await eventually { log.all.contains("expired") })
        #expect(app.state == .background)

        // Just before the end: still running, its task still open.
        clock.step(by: .milliseconds(999))
        #expect(await threads.timers.haveLookedAtTheTimeNow())
        #expect(app.state == .background)

        // The end, with the task still open: terminated for it.
        clock.step(by: .milliseconds(1))
        #expect(await eventually { app.state == .notRunning })
        #expect(app.terminationReason == .backgroundTaskExpired)
        #expect(task.value != nil)
    }
}
