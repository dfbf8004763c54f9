@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Testing

/// Every public record and statistic reads as a sentence, in the words a user would write; every
/// refusal says what was expected.
@Suite struct ReadableValuesTests {
    @Test func recordsAndStatisticsReadAsSentences() {
        let record = TerminationRecord(
            app: .test("acme"), state: .suspended, footprintBytes: 12 << 20, reason: .systemPressure,
            returnedBytes: (11 << 20) + (512 << 10), time: .now, step: .terminateSuspended
        )
        #expect("\(record)" == "app acme terminated from suspended for system pressure: footprint 12 MiB, returned 11.5 MiB, step terminateSuspended")

        var latencies = PurgeLatencyStatistics()
        #expect("\(latencies)" == "no purge latencies")
        for milliseconds in [4, 2, 9] { latencies.record(.milliseconds(milliseconds)) }
        #expect("\(latencies)" == "3 purge latencies: p50 4.0 ms, p99 9.0 ms, max 9.0 ms")

        let footprint = AppFootprint(heapBytes: 10 << 20, declaredBytesOutsideHeap: 2 << 20)
        #expect("\(footprint)" == "12 MiB (heap 10 MiB, declared outside the heap 2 MiB)")

        let sample = MemorySample(time: .now, residentBytes: 500 << 20)
        #expect("\(sample)" == "footprint 500 MiB (resident 500 MiB)")
        #expect("\(MemorySample(time: .now))" == "footprint unknown")
        #expect("\(MemoryWarning(level: .critical))" == "memory warning at critical")

        let run = LadderRun(
            level: .critical, crossingTime: .now, startTime: .now, endTime: .now, footprintBeforeBytes: 900 << 20,
            footprintAfterBytes: 700 << 20, targetBytes: 720 << 20,
            steps: [.init(step: .purge, duration: .milliseconds(3), releasedBytes: 0, terminated: [])],
            latency: .microseconds(12_500)
        )
        #expect("\(run)" == "ladder run at critical: footprint 900 MiB to 700 MiB (target 720 MiB), steps purge; under target 12.5 ms after the crossing")
        #expect(Duration.seconds(2.5).readable == "2.5 s")
    }

    @Test func aRefusalAtTheHardLimitSaysWhatIsExpected() {
        let full = MemoryPressureError.heapOverHardLimit(app: .test("full"), bytes: 4096, heapBytes: 8192, hardLimit: 8192)
        #expect(full.description.hasSuffix("expected the app to free some of its heap before it allocates more"))
        #expect(!full.description.contains("at most 0 bytes"))
        let room = MemoryPressureError.heapOverHardLimit(app: .test("room"), bytes: 4096, heapBytes: 6144, hardLimit: 8192)
        #expect(room.description.hasSuffix("expected an allocation of at most 2048 bytes"))
    }
}
