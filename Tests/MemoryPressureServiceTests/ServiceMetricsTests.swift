import MemoryPressure
@testable import MemoryPressureService
import MemoryPressureTestKit
import MemoryTestSupport
import MetricsTestKit
import Testing

/// What the service records with swift-metrics, read back with the test kit.
@Suite(.exclusiveMemoryUse)
struct ServiceMetricsTests {
    @Test func aWarningAPurgeAndATerminationAreRecorded() async throws {
        // 100 MiB budget: warning at 80, critical at 95, target 70.
        let source = OwnedFootprintSource()
        let system = try makeSystem(source: source)
        let events = EventLog(observing: system)
        let journal = TestAppJournal()
        let registry = system.registry
        let ballast = try system.register(AppIdentifier("ballast")) {
            journaledDelegate(journal: journal, registry: registry, ballastBytes: 30 * mebibyte)
        }
        try await ballast.launch()
        try await ballast.enterBackground()
        let responses = try PurgeableCache<Int, [UInt8]>(
            name: "responses", owner: AppIdentifier("service"), category: .rebuildableObjects
        )
        system.register(responses)
        for key in 0..<10 {
            try responses.setValue([], forKey: key, cost: mebibyte)
        }
        source.setBase(45 * mebibyte)  // 45 + 30 (app) + 10 (cache) = 85 MiB: warning

        let metrics = TestMetrics()
        let service = MemoryPressureService(
            system: system, metrics: try .init(appFootprintInterval: .milliseconds(10), factory: metrics)
        )
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await service.run() }
            // The warning run purges the cache (75 MiB left, above target) and warns.
            #expect(await events.first { $0.isLadderRun(at: .warning) } != nil)
            #expect(await eventually { (try? metrics.expectGauge("memory_pressure_app_footprint_bytes", [("app", "ballast")])) != nil })
            source.setBase(66 * mebibyte)  // 66 + 30 = 96 MiB: critical; 66 without the app: under target
            #expect(await events.first { $0.runUnderTarget != nil } != nil)
            tasks.cancelAll()
            try await tasks.waitForAll()
        }

        func counter(_ name: String, _ dimension: (String, String)) throws -> Int64 {
            try metrics.expectCounter("memory_pressure_\(name)", [dimension]).totalValue
        }
        #expect(try counter("warnings_total", ("step", "warning")) == 2)  // the rise to warning, the rise to critical
        #expect(try counter("warnings_total", ("step", "softLimit")) == 0)
        #expect(try counter("purged_bytes_total", ("step", "purge")) == Int64(10 * mebibyte))
        #expect(try counter("terminations_total", ("reason", "systemPressure")) == 1)
        #expect(try counter("terminations_total", ("reason", "explicit")) == 0)
        #expect(try metrics.expectTimer("memory_pressure_purge_latency_seconds").values.count == 1)
        let sampleDurations = try metrics.expectTimer("memory_pressure_sample_duration_seconds").values
        #expect(!sampleDurations.isEmpty && sampleDurations.allSatisfy { $0 > 0 })
        #expect(try metrics.expectGauge("memory_pressure_budget_bytes").lastValue == Double(100 * mebibyte))
        #expect(try metrics.expectGauge("memory_pressure_target_bytes").lastValue == Double(70 * mebibyte))
        #expect(try metrics.expectGauge("memory_pressure_footprint_bytes").values.contains(Double(96 * mebibyte)))
        #expect(try Set(metrics.expectGauge("memory_pressure_level").values).isSuperset(of: [1, 2]))
    }

    @Test func perAppGaugesKeepTheLargestAppsAndSumTheRest() throws {
        let metrics = TestMetrics()
        let gauges = AppFootprintGauges(
            label: "apps", othersLabel: "others", maximumLabels: 2, interval: .seconds(1), factory: metrics
        )
        func app(_ name: String) -> AppIdentifier { try! AppIdentifier(name) }
        func labelled() -> [String: Double] {
            Dictionary(uniqueKeysWithValues: metrics.recorders(label: "apps").map { ($0.dimensions[0].1, $0.lastValue ?? -1) })
        }
        let start = ContinuousClock.now
        #expect(gauges.isDue(at: start))
        gauges.update(with: [(app("a"), 10), (app("b"), 30), (app("c"), 20), (app("d"), 0)], at: start)
        #expect(labelled() == ["b": 30, "c": 20])
        #expect(try metrics.expectGauge("others").lastValue == 10)

        #expect(!gauges.isDue(at: start + .milliseconds(999)))
        #expect(gauges.isDue(at: start + .seconds(1)))
        gauges.update(with: [(app("a"), 50), (app("b"), 30), (app("c"), 20), (app("e"), 5)], at: start + .seconds(1))
        #expect(labelled() == ["a": 50, "b": 30])
        #expect(try metrics.expectGauge("others").lastValue == 25)
    }

    @Test func badSettingsAreClearErrors() throws {
        func rejection(_ make: () throws -> MemoryMetrics.Configuration) -> String? {
            #expect(throws: MemoryMetricsConfigurationError.self) { _ = try make() }?.description
        }
        #expect(rejection { try .init(prefix: "") }?.contains("expected letters, digits, '_' or ':'") == true)
        #expect(rejection { try .init(prefix: "9lives") } != nil)
        #expect(rejection { try .init(prefix: "memory-pressure") } != nil)
        #expect(rejection { try .init(maximumAppLabels: -1) } == "maximumAppLabels of -1 is out of range; expected 0 to 1000")
        #expect(rejection { try .init(maximumAppLabels: 1001) } != nil)
        #expect(rejection { try .init(appFootprintInterval: .zero) }?.hasSuffix("expected 0.01 seconds to 3600.0 seconds") == true)
        let accepted = try MemoryMetrics.Configuration(prefix: "service:memory", maximumAppLabels: 0)
        #expect(accepted.prefix == "service:memory")
    }
}
