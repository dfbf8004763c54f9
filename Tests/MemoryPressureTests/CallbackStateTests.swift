@_spi(Benchmarks) @testable import MemoryPressure
import MemoryPressureTestKit
import Testing

/// Issue 16, item 1: inside each callback `state` reads what UIKit's `applicationState` reads.
struct CallbackStateTests {
    /// Records the state each callback reads.
    final class StateRecorder: AppDelegate {
        let log = SharedLog<String>()

        func record(_ callback: String, _ app: isolated App) { log.append("\(callback) \(app.state)") }
        func willFinishLaunching(_ app: isolated App, options: LaunchOptions) { record("willFinishLaunching", app) }
        func didFinishLaunching(_ app: isolated App, options: LaunchOptions) { record("didFinishLaunching", app) }
        func didBecomeActive(_ app: isolated App) { record("didBecomeActive", app) }
        func willResignActive(_ app: isolated App) { record("willResignActive", app) }
        func didEnterBackground(_ app: isolated App) { record("didEnterBackground", app) }
        func willEnterForeground(_ app: isolated App) { record("willEnterForeground", app) }
        func willTerminate(_ app: isolated App) { record("willTerminate", app) }
    }

    @Test func eachCallbackReadsTheStateUIKitReportsThere() async throws {
        let recorder = StateRecorder()
        let app = App(identifier: .test("reader"), delegate: recorder, configuration: .quick)
        try await app.launch()
        #expect(recorder.log.take() == ["willFinishLaunching inactive", "didFinishLaunching inactive", "didBecomeActive active"])
        try await app.deactivate()
        #expect(recorder.log.take() == ["willResignActive active"])
        try await app.activate()
        #expect(recorder.log.take() == ["didBecomeActive active"])
        try await app.enterBackground()
        #expect(recorder.log.take() == ["willResignActive active", "didEnterBackground background"])
        try await app.enterForeground()
        #expect(recorder.log.take() == ["willEnterForeground background", "didBecomeActive active"])
        try await app.terminate(reason: .explicit)
        #expect(recorder.log.take() == ["willTerminate active"])
        // Between callbacks it reads the state the system moved the app to.
        #expect(app.state == .notRunning)

        try await app.launch(options: LaunchOptions(reason: .backgroundEvent("fetch")))
        #expect(recorder.log.take() == ["willFinishLaunching background", "didFinishLaunching background", "didEnterBackground background"])
        #expect(app.state == .suspended)
        try await app.terminate(reason: .explicit)
    }

    @Test func aRelaunchedAppLearnsWhyItsPreviousInstanceEnded() async throws {
        let app = App(identifier: .test("relaunched"), delegate: IdleDelegate(), configuration: .quick)
        try await app.launch()
        #expect(app.launchOptionsForTest.previousTermination == nil)
        try await app.enterBackground()
        try await app.terminate(reason: .systemPressure)
        try await app.launch()
        #expect(app.launchOptionsForTest.previousTermination == .systemPressure)
        try await app.terminate(reason: .explicit)
        try await app.launch()
        #expect(app.launchOptionsForTest.previousTermination == .explicit)
        try await app.terminate(reason: .explicit)
    }
}

extension App {
    /// The current launch's options, read from outside the app.
    nonisolated var launchOptionsForTest: LaunchOptions { record.withLock { $0.launchOptions } }
}
