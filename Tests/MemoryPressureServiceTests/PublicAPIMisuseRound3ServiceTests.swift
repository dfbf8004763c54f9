import MemoryPressure
import MemoryPressureService
import MemoryPressureTestKit
import MetricsTestKit
import Testing

/// The service module's public API misused (see `PublicAPIMisuseRound3Tests`).
@Suite struct PublicAPIMisuseRound3ServiceTests {
    @Test func appFootprintsThatAddUpPastIntMaxAreRecordedClampedNotATrap() async throws {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
        configuration.logger = silentLogger
        configuration.monitor.logger = silentLogger
        let system = try MemorySystem(configuration: configuration)
        // Caches that keep what they hold at every level, so that no purge lowers their cost.
        let keeping = CacheCategory.custom(name: "kept", onEnteringBackground: .keep, onWarning: .keep, onCritical: .keep)
        let caches = try (0..<3).map { index in
            let cache = try PurgeableCache<Int, Int>(name: "huge \(index)", owner: .test("huge-\(index)"), category: keeping)
            try cache.setValue(index, forKey: index, cost: .max)
            system.register(cache)
            return cache
        }
        let metrics = TestMetrics()
        let recorder = MemoryMetrics(system: system, configuration: try .init(maximumAppLabels: 1, factory: metrics))
        try await system.running {
            #expect(await eventually { (try? metrics.expectGauge("memory_pressure_other_apps_footprint_bytes"))?.lastValue != nil })
        }
        recorder.stop()
        #expect(try metrics.expectGauge("memory_pressure_other_apps_footprint_bytes").lastValue == Double(Int.max))
        withExtendedLifetime(caches) {}
    }

    @Test func aSecondRunOfAServiceForARunningSystemIsRefusedAndLeavesItsAppsRunning() async throws {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
        configuration.logger = silentLogger
        configuration.monitor.logger = silentLogger
        let system = try MemorySystem(configuration: configuration)
        let app = try system.register(.test("second-service")) { IdleDelegate() }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await MemoryPressureService(system: system, metrics: nil).run() }
            #expect(await eventually { system.monitor.latestSample != nil })
            try await app.launch()
            // The same system in a second service (or one service run twice): its run is refused,
            // and it shut the system down on its way out, terminating every app of the run that
            // goes on.
            let error = await #expect(throws: MemoryPressureError.self) {
                try await MemoryPressureService(system: system, metrics: nil).run()
            }
            #expect(error?.code == .alreadyRunning)
            #expect(app.state == .active)
            #expect(system.terminations.isEmpty, "\(system.terminations)")
            // The first service shuts its apps down as it ends.
            tasks.cancelAll()
            try await tasks.waitForAll()
        }
        #expect(app.state == .notRunning)
        #expect(system.terminations.map(\.app) == [app.identifier])
    }
}
