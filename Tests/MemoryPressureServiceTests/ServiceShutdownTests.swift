import MemoryPressure
import MemoryPressureService
import MemoryPressureTestKit
import MemoryTestSupport
import MetricsTestKit
import ServiceLifecycle
import Testing

/// The service in a service group: however the group ends, the monitor stops, running apps get
/// `willTerminate` and what they saved is there on their next launch.
@Suite(.exclusiveMemoryUse)
struct ServiceShutdownTests {
    enum Ending: Sendable, CaseIterable {
        case gracefulShutdown
        case cancellation
    }

    @Test(arguments: Ending.allCases)
    func shuttingDownDeliversWillTerminateAndStopsTheMonitor(ending: Ending) async throws {
        let archiveDirectory = try TemporaryDirectory()
        let system = try makeSystem(source: OwnedFootprintSource(), archiveIn: archiveDirectory)
        let journal = TestAppJournal()
        let longTasks = try AppConfiguration(terminationDeadline: .seconds(30), backgroundTaskTimeLimit: .seconds(600))
        func launch(_ name: String) async throws -> App {
            let registry = system.registry
            let app = try system.register(AppIdentifier(name), configuration: longTasks) {
                journaledDelegate(journal: journal, registry: registry)
            }
            try await app.launch()
            return app
        }
        let active = try await launch("active")
        let working = try await launch("working")
        _ = try working.beginBackgroundTask { _ in }
        try await working.enterBackground()
        let suspended = try await launch("suspended")
        try await suspended.enterBackground()
        #expect([active.state, working.state, suspended.state] == [.active, .background, .suspended])

        let metrics = TestMetrics()
        let group = ServiceGroup(
            services: [MemoryPressureService(system: system, metrics: try .init(factory: metrics))],
            logger: silentLogger
        )
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await group.run() }
            #expect(await eventually { system.monitor.latestSample != nil })
            #expect(system.monitor.isRunning)
            switch ending {
            case .gracefulShutdown: await group.triggerGracefulShutdown()
            case .cancellation: tasks.cancelAll()
            }
            try await tasks.waitForAll()
        }

        #expect(!system.monitor.isRunning)
        #expect(system.apps.allSatisfy { $0.state == .notRunning && $0.terminationReason == .explicit })
        #expect(journal.callbacks(of: "active").last == "willTerminate")
        #expect(journal.callbacks(of: "working").last == "willTerminate")
        #expect(journal.callbacks(of: "suspended").last == "didEnterBackground")
        #expect(Set(system.terminations.map(\.app.rawValue)) == ["active", "working", "suspended"])
        let explicit = try metrics.expectCounter("memory_pressure_terminations_total", [("reason", "explicit")])
        #expect(explicit.totalValue == 3)

        // What each app saved last comes back on its next launch; the service's metrics have stopped.
        for app in [active, working, suspended] {
            try await app.launch()
        }
        #expect(journal.callbacks(of: "active").last == "restored from willTerminate")
        #expect(journal.callbacks(of: "working").last == "restored from willTerminate")
        #expect(journal.callbacks(of: "suspended").last == "restored from didEnterBackground")
        #expect(await system.shutDown().count == 3)
        #expect(explicit.totalValue == 3)
        withExtendedLifetime(archiveDirectory) {}
    }
}
