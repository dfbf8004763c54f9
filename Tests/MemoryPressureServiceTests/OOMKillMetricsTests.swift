import MemoryPressure
@testable import MemoryPressureService
import MemoryPressureTestKit
import MemoryTestSupport
import MetricsTestKit
import SystemPackage
import Testing

/// The OOM kills the monitor counts reach the metrics as `memory_pressure_oom_kills_total`.
@Suite(.exclusiveMemoryUse)
struct OOMKillMetricsTests {
    @Test func oomKillsInTheCgroupAreCounted() async throws {
        let directory = try TemporaryDirectory()
        let events = directory.path.appending("memory.events")
        func memoryEvents(oomKill: Int) -> String { "low 0\nhigh 0\nmax 0\noom \(oomKill)\noom_kill \(oomKill)\n" }
        try directory.write("memory.current", "1048576\n")
        try directory.write("memory.events", memoryEvents(oomKill: 1))

        var configuration = MemorySystem.Configuration(budget: try MemoryBudget(totalBytes: 1 << 30), logger: silentLogger)
        configuration.monitor.sources = [ControlGroupSampleSource(group: ControlGroup(directory: directory.path))]
        configuration.monitor.interval = .seconds(600)  // only the memory.events watch brings a sample
        configuration.monitor.stallThresholds = nil
        configuration.monitor.stallTrigger = nil
        configuration.monitor.controlGroupEvents = .given(memoryEvents: events, pressureLevelDirectory: nil)
        let system = try MemorySystem(configuration: configuration)
        let metrics = TestMetrics()
        let recorder = MemoryMetrics(system: system, configuration: try .init(factory: metrics))
        defer { recorder.stop() }

        try await system.running {
            #expect(await eventually { system.monitor.latestSample != nil })
            // The kill before the monitor's first sample is not counted; the two after it are.
            let file = try FileDescriptor.open(events, .writeOnly)
            _ = try file.closeAfter { try file.writeAll(toAbsoluteOffset: 0, memoryEvents(oomKill: 3).utf8) }
            #expect(await eventually { (try? metrics.expectCounter("memory_pressure_oom_kills_total").totalValue) == 2 })
        }
        #expect(system.monitor.oomKillCount == 2)
    }
}
