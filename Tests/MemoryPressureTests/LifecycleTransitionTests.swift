import MemoryPressure
import MemoryPressureTestKit
import Testing

/// The transitions and the callbacks of each, in order. No deadline is their subject: their apps
/// have ``AppConfiguration/patient(backgroundTime:)`` limits, or the iOS defaults, so that a
/// loaded machine does not end one by a deadline mid-sequence.
@Suite(.timeLimit(.minutes(1)))
struct LifecycleTransitionTests {
    @Test func launchIntoTheForegroundPassesThroughInactiveToActive() async throws {
        let log = SharedLog<String>()
        let events = EventSource<LifecycleEvent>()
        let stream = events.stream()
        let app = try makeApp("fg", log: log, configuration: .patient(), events: events)
        let state = try await app.launch()
        #expect(state == .active)
        #expect(log.all == ["willFinishLaunching", "didFinishLaunching", "didBecomeActive"])
        let changes = await stream.collect(2)
        #expect(changes == [
            .stateChanged(app: app.identifier, from: .notRunning, to: .inactive),
            .stateChanged(app: app.identifier, from: .inactive, to: .active),
        ])
    }

    @Test func launchIntoTheBackgroundSuspendsWhenNoWorkRemains() async throws {
        let log = SharedLog<String>()
        let app = try makeApp("bg", log: log, configuration: .patient())
        let state = try await app.launch(options: LaunchOptions(reason: .backgroundEvent("fetch")))
        #expect(state == .suspended)
        #expect(log.all == ["willFinishLaunching", "didFinishLaunching", "didEnterBackground"])
    }

    /// The sequence of the delegate-callbacks source document: start (① ② ④), home (③ ⑤), open
    /// again (⑥ ④).
    @Test func launchHomeAndReturnMatchTheSourceDocument() async throws {
        let log = SharedLog<String>()
        let app = try makeApp("document", log: log, configuration: .patient())
        try await app.launch()
        #expect(try await app.enterBackground() == .suspended)
        #expect(try await app.enterForeground() == .active)
        #expect(log.all == [
            "willFinishLaunching", "didFinishLaunching", "didBecomeActive",
            "willResignActive", "didEnterBackground",
            "willEnterForeground", "didBecomeActive",
        ])
    }

    @Test func interruptionMovesBetweenActiveAndInactive() async throws {
        let log = SharedLog<String>()
        let app = try makeApp("call", log: log, configuration: .patient())
        try await app.launch()
        log.clear()
        #expect(try await app.deactivate() == .inactive)
        #expect(log.all == ["willResignActive"])
        #expect(try await app.activate() == .active)
        #expect(log.all == ["willResignActive", "didBecomeActive"])
    }

    @Test func homeFromInactiveSkipsWillResignActive() async throws {
        let log = SharedLog<String>()
        let app = try makeApp("locked", log: log, configuration: .patient())
        try await app.launch()
        try await app.deactivate()
        log.clear()
        #expect(try await app.enterBackground() == .suspended)
        #expect(log.all == ["didEnterBackground"])
    }

    @Test func returningFromTheBackgroundBeforeSuspension() async throws {
        let log = SharedLog<String>()
        let task = SharedBox<BackgroundTaskIdentifier?>(nil)
        let app = try makeApp("upload", log: log, configuration: .default) { delegate in
            delegate.onDidEnterBackground = { app in
                task.value = try? app.beginBackgroundTask { _ in }
            }
        }
        try await app.launch()
        #expect(try await app.enterBackground() == .background)
        log.clear()
        #expect(try await app.enterForeground() == .active)
        #expect(log.all == ["willEnterForeground", "didBecomeActive"])
        try app.endBackgroundTask(try #require(task.value))
        #expect(app.state == .active)
    }

    @Test func terminatingARunningAppCallsWillTerminate() async throws {
        let log = SharedLog<String>()
        let events = EventSource<LifecycleEvent>()
        let stream = events.stream()
        let app = try makeApp("running", log: log, configuration: .patient(), events: events)
        try await app.launch()
        log.clear()
        #expect(try await app.terminate(reason: .explicit) == .notRunning)
        #expect(log.all == ["willTerminate"])
        #expect(app.terminationReason == .explicit)
        let terminated = await stream.first { if case .terminated = $0 { true } else { false } }
        #expect(terminated == .terminated(app: app.identifier, reason: .explicit, state: .active))
    }

    @Test func terminatingASuspendedAppCallsNothing() async throws {
        let log = SharedLog<String>()
        let app = try makeApp("sleeping", log: log, configuration: .patient())
        try await app.launch()
        try await app.enterBackground()
        log.clear()
        #expect(try await app.terminate(reason: .systemPressure) == .notRunning)
        #expect(log.all.isEmpty)
        #expect(app.terminationReason == .systemPressure)
    }

    @Test func aTerminatedAppRelaunchesWithItsRestoredState() async throws {
        let restored = SharedBox<[UInt8]?>(nil)
        let app = try makeApp("restored", configuration: .patient()) { delegate in
            delegate.onDidFinishLaunching = { _, options in restored.value = options.restoredState }
        }
        try await app.launch()
        try await app.terminate(reason: .explicit)
        let state = try await app.launch(options: LaunchOptions(reason: .stateRestoration, restoredState: [1, 2, 3]))
        #expect(state == .active)
        #expect(restored.value == [1, 2, 3])
        #expect(app.terminationReason == nil)
    }

    enum Setup: CaseIterable {
        case notRunning, active, inactive, suspended
    }

    @Test(arguments: [
        (Setup.notRunning, LifecycleTransition.suspend, AppState.notRunning),
        (.notRunning, .activate, .notRunning),
        (.notRunning, .deactivate, .notRunning),
        (.notRunning, .enterBackground, .notRunning),
        (.notRunning, .enterForeground, .notRunning),
        (.notRunning, .terminate, .notRunning),
        (.active, .launch, .active),
        (.active, .activate, .active),
        (.active, .enterForeground, .active),
        (.active, .suspend, .active),
        (.inactive, .deactivate, .inactive),
        (.suspended, .enterBackground, .suspended),
        (.suspended, .activate, .suspended),
        (.suspended, .launch, .suspended),
        (.active, .unregister, .active),
        (.suspended, .unregister, .suspended),
    ])
    func invalidTransitionsAreTypedErrorsThatChangeNothing(
        setup: Setup, transition: LifecycleTransition, expectedState: AppState
    ) async throws {
        let log = SharedLog<String>()
        let app = try makeApp("invalid", log: log, configuration: .patient())
        switch setup {
        case .notRunning: break
        case .active: try await app.launch()
        case .inactive: try await app.launch(); try await app.deactivate()
        case .suspended: try await app.launch(); try await app.enterBackground()
        }
        log.clear()
        let error = await #expect(throws: MemoryPressureError.self) {
            switch transition {
            case .launch: try await app.launch()
            case .activate: try await app.activate()
            case .deactivate: try await app.deactivate()
            case .enterBackground: try await app.enterBackground()
            case .enterForeground: try await app.enterForeground()
            case .suspend: try await app.suspend()
            case .terminate: try await app.terminate(reason: .explicit)
            case .beginBackgroundTask: _ = try app.beginBackgroundTask { _ in }
            case .unregister: try app.unregister()
            }
        }
        #expect(error?.code == .invalidTransition)
        #expect(error?.app == app.identifier)
        #expect(error?.description.hasPrefix("app \(app.identifier) cannot \(transition) from state \(expectedState); accepted states: ") == true)
        #expect(app.state == expectedState)
        #expect(log.all.isEmpty)
    }

    @Test func suspendingWithAnOpenBackgroundTaskIsRefused() async throws {
        let app = try makeApp("busy", configuration: .default) { delegate in
            delegate.onDidEnterBackground = { app in _ = try? app.beginBackgroundTask { _ in } }
        }
        try await app.launch()
        try await app.enterBackground()
        let error = await #expect(throws: MemoryPressureError.self) {
            try await app.suspend()
        }
        #expect(error?.code == .invalidTransition)
        #expect(error?.app == app.identifier)
        #expect(error?.description == "app \(app.identifier) cannot suspend with 1 background task(s) open; end them first")
        #expect(app.state == .background)
        try await app.terminate(reason: .explicit)
    }

    @Test func endingAnUnknownBackgroundTaskIsATypedError() async throws {
        let app = try makeApp("tasks", configuration: .default)
        try await app.launch()
        let task = try app.beginBackgroundTask { _ in }
        try app.endBackgroundTask(task)
        let error = #expect(throws: MemoryPressureError.self) {
            try app.endBackgroundTask(task)
        }
        #expect(error?.code == .unknownBackgroundTask)
        #expect(error?.app == app.identifier)
        #expect(error?.description == "app \(app.identifier) has no open background task \(task)")
    }

    @Test(arguments: [Duration.zero, .milliseconds(-5), .seconds(3601)])
    func outOfRangeLimitsAreTypedErrorsNamingTheRange(_ limit: Duration) {
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try AppConfiguration(backgroundTaskTimeLimit: limit)
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.description == "backgroundTaskTimeLimit of \(limit) is out of range; expected 0.001 seconds to 3600.0 seconds")
    }
}
