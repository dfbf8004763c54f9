import Logging
import MemoryPressure
import MemoryPressureService
import MemoryPressureTestKit
import MemoryTestSupport
import ServiceLifecycle
import Testing

/// The README's three-line start: a service that only wants its caches purged under pressure.
@Suite(.exclusiveMemoryUse)
struct ThreeLineStartTests {
    @Test func theThreeLinesRunTheSystemUntilTheServiceGroupEnds() async throws {
        let responseCache = try PurgeableCache<String, [UInt8]>(
            name: "responses", owner: AppIdentifier("service"), category: .rebuildableObjects
        )
        let logger = Logger(label: "service")

        // The three lines, as in the README (the last one in a task, so the test can end it).
        let system = try MemorySystem(configuration: .init(budget: .resolve(.automatic())))
        system.register(responseCache)
        let service = Task {
            try await ServiceGroup(services: [MemoryPressureService(system: system)], gracefulShutdownSignals: [.sigterm], logger: logger).run()
        }

        #expect(await eventually { system.monitor.isRunning })
        #expect(try system.registry.caches(of: AppIdentifier("service")).count == 1)
        #expect(system.configuration.budget.totalBytes <= MemoryLimits.current().physicalBytes)
        service.cancel()
        try await service.value
        #expect(!system.monitor.isRunning)
    }
}
