#if canImport(Glibc)
import Glibc
#endif
import MemoryPressure
import MemoryPressureTestKit
import SystemPackage
import Testing

/// `MemorySystem.simulateMemoryWarning(level:)` through the public API alone: what a test or a
/// drill sends to see how its apps answer a warning, delivered as the ladder's.
@Suite(.timeLimit(.minutes(1)))
struct SimulatedMemoryWarningTests {
    /// A delegate that logs the warnings it hears, with their level, and gives its app a view
    /// controller and an observer that log theirs.
    final class WarnedDelegate: AppDelegate {
        let log: SharedLog<String>

        init(log: SharedLog<String>) {
            self.log = log
        }

        func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
            let log = log
            let name = app.identifier.rawValue
            app.rootViewController = LoggingController(name: "\(name) controller", log: log)
            app.notificationCenter.addObserver(forName: .didReceiveMemoryWarning) { _, _ in log.append("\(name) observer") }
        }

        func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning) {
            log.append("\(app.identifier.rawValue) delegate \(warning.level)")
        }
    }

    final class LoggingController: ViewController {
        let name: String
        let log: SharedLog<String>

        init(name: String, log: SharedLog<String>) {
            self.name = name
            self.log = log
        }

        override func didReceiveMemoryWarning() {
            super.didReceiveMemoryWarning()
            log.append(name)
        }
    }

    @Test func aSimulatedWarningReachesEveryRunningAppAsTheLaddersDoesAndNoSuspendedOne() async throws {
        let system = try MemorySystem(configuration: .init(budget: try MemoryBudget(totalBytes: 1 << 30)))
        let log = SharedLog<String>()
        var apps: [String: App] = [:]
        for name in ["active", "inactive", "background", "suspended"] {
            apps[name] = try system.register(try AppIdentifier(name)) { WarnedDelegate(log: log) }
            try await apps[name]!.launch()
        }
        try await apps["inactive"]!.deactivate()
        _ = try apps["background"]!.beginBackgroundTask { _ in }
        #expect(try await apps["background"]!.enterBackground() == .background)
        #expect(try await apps["suspended"]!.enterBackground() == .suspended)
        let events = system.events.stream()

        let delivery = try await system.simulateMemoryWarning(level: .critical)
        #expect(delivery.warning.level == .critical)
        #expect(delivery.warning.sample == nil, "a simulated warning carries no sample")
        #expect(delivery.appsReached == 3)
        #expect(delivery.delegatesReached == 3)
        #expect(delivery.viewControllersReached == 3)
        #expect(delivery.observersReached == 3)
        #expect(Set(delivery.order.map(\.rawValue)) == ["active", "inactive", "background"])
        #expect(delivery.order.first?.rawValue == "background", "least important first, as the ladder's")
        // Each in its app's order: delegate, view controllers, observers; none in the suspended app.
        for name in ["active", "inactive", "background"] {
            #expect(log.all.filter { $0.hasPrefix("\(name) ") } == ["\(name) delegate critical", "\(name) controller", "\(name) observer"])
        }
        #expect(!log.all.contains { $0.hasPrefix("suspended") })
        // Published as the ladder's warning is; nothing purged, nothing terminated.
        let published = await events.first { if case .warning = $0 { true } else { false } }
        guard case .warning(let publishedDelivery, let step)? = published else {
            Issue.record("no warning event")
            return
        }
        #expect(step == .warning)
        #expect(publishedDelivery == delivery)
        #expect(system.terminations.isEmpty)
        #expect(apps.values.allSatisfy { $0.state != .notRunning })

        // The default level is `warning`.
        #expect(try await system.simulateMemoryWarning().warning.level == .warning)
        _ = await system.shutDown()
    }

    @Test func aWarningAtTheNormalLevelIsRefusedAndSendsNothing() async throws {
        let system = try MemorySystem(configuration: .init(budget: try MemoryBudget(totalBytes: 1 << 30)))
        let log = SharedLog<String>()
        let app = try system.register(try AppIdentifier("app")) { WarnedDelegate(log: log) }
        try await app.launch()
        let error = await #expect(throws: MemoryPressureError.self) { try await system.simulateMemoryWarning(level: .normal) }
        #expect(error?.code == .invalidArgument)
        #expect("\(error.map { "\($0)" } ?? "")".contains("expected warning or critical"))
        #expect(try await system.simulateMemoryWarning().appsReached == 1)
        #expect(log.all == ["app delegate warning", "app controller", "app observer"], "only the accepted warning was sent")
        _ = await system.shutDown()
    }
}
