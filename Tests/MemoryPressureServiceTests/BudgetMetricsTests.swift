@_spi(Benchmarks) import MemoryPressure
@testable import MemoryPressureService
import MemoryPressureTestKit
import MemoryTestSupport
import MetricsTestKit
import Testing

/// The budget and target gauges follow the cgroup's limit, and each give-up is counted.
@Suite(.exclusiveMemoryUse)
struct BudgetMetricsTests {
    @Test func theBudgetAndTargetGaugesFollowALoweredLimit() async throws {
        let physical = 64 << 30
        let limit = SharedBox(1 << 30)
        let reader = MemoryLimitsReader {
            MemoryLimitsReader.Reading(limits: MemoryLimits(physicalBytes: physical, controlGroupMaximum: limit.value))
        }
        let budget = try MemoryBudget.resolve(.automatic(ratio: 0.5), limits: reader.read().limits)
        let source = OwnedFootprintSource()
        var configuration = MemorySystem.Configuration(budget: budget, logger: silentLogger)
        configuration.monitor.sources = [source]
        configuration.monitor.interval = .milliseconds(20)
        configuration.monitor.stallThresholds = nil
        configuration.monitor.stallTrigger = nil
        configuration.monitor.controlGroupEvents = .none
        configuration.monitor.limitCheckInterval = .milliseconds(20)
        configuration.monitor.limitsReader = reader
        let system = try MemorySystem(configuration: configuration)
        source.attach(system)
        source.setBase(mebibyte)
        let events = EventLog(observing: system)
        let metrics = TestMetrics()
        let service = MemoryPressureService(system: system, metrics: try .init(factory: metrics))
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await service.run() }
            #expect(await eventually { system.monitor.latestSample != nil })
            #expect(try metrics.expectGauge("memory_pressure_budget_bytes").lastValue == Double(512 << 20))
            limit.value = 256 << 20
            #expect(await events.first { if case .budgetChanged = $0 { true } else { false } } != nil)
            tasks.cancelAll()
            try await tasks.waitForAll()
        }
        #expect(try metrics.expectGauge("memory_pressure_budget_bytes").lastValue == Double(128 << 20))
        #expect(try metrics.expectGauge("memory_pressure_target_bytes").lastValue == Double(system.targetBytes))
        #expect(system.targetBytes == Int(Double(128 << 20) * 0.7))
    }

    @Test func eachGiveUpIsCounted() async throws {
        let source = OwnedFootprintSource()
        var configuration = MemorySystem.Configuration(budget: try MemoryBudget(totalBytes: 100 * mebibyte), logger: silentLogger)
        configuration.monitor.sources = [source]
        configuration.monitor.interval = .milliseconds(10)
        configuration.monitor.stallThresholds = nil
        configuration.monitor.stallTrigger = nil
        configuration.monitor.controlGroupEvents = .none
        configuration.unrecoverable = try Unrecoverable(after: .milliseconds(100), action: .report)
        let system = try MemorySystem(configuration: configuration)
        source.attach(system)
        source.setBase(120 * mebibyte)  // over the budget, and nothing to reclaim
        let events = EventLog(observing: system)
        let metrics = TestMetrics()
        let service = MemoryPressureService(system: system, metrics: try .init(factory: metrics))
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await service.run() }
            #expect(await events.first { if case .unrecoverable = $0 { true } else { false } } != nil)
            tasks.cancelAll()
            try await tasks.waitForAll()
        }
        #expect(try metrics.expectCounter("memory_pressure_unrecoverable_total").totalValue == 1)
    }
}
