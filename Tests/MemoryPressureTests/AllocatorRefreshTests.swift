import Jemalloc
@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Testing

/// The jemalloc epoch is refreshed on a schedule of its own, not on every full sample: its cost
/// grows with the arenas, and no decision waits for it.
struct AllocatorRefreshTests {
    @Test func fullSamplesRefreshTheEpochAtMostOncePerIntervalAndAlwaysCarryTheStatistics() throws {
        let source = JemallocSampleSource(refreshInterval: .seconds(3600))
        let start = ContinuousClock.now
        var first = MemorySample(time: start, residentBytes: 1 << 20)
        try source.read(into: &first)
        #expect(first.allocatorRefreshDuration != nil)
        #expect(try #require(first.jemalloc).allocated > 0)

        var second = MemorySample(time: start + .seconds(60), residentBytes: 1 << 20)
        try source.read(into: &second)
        #expect(second.allocatorRefreshDuration == nil)
        #expect(second.jemalloc != nil)

        var later = MemorySample(time: start + .seconds(3600), residentBytes: 1 << 20)
        try source.read(into: &later)
        #expect(later.allocatorRefreshDuration != nil)
    }

    @Test func withoutStatmEveryFullSampleRefreshes() throws {
        let source = JemallocSampleSource(refreshInterval: .seconds(3600))
        let start = ContinuousClock.now
        for offset in 0..<3 {
            var sample = MemorySample(time: start + .seconds(offset))
            try source.read(into: &sample)
            #expect(sample.allocatorRefreshDuration != nil)
            #expect(sample.footprintBytes == sample.jemalloc?.resident)
        }
    }

    @Test func theRefreshDurationIsEncoded() throws {
        var sample = MemorySample(time: .now, residentBytes: 4096)
        sample.allocatorRefreshDuration = .microseconds(250)
        let json = try JSONValue.encoding(sample)
        #expect(json["allocatorRefreshSeconds"] == .number(0.00025))
    }
}
