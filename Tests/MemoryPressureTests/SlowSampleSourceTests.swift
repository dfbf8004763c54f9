import Dispatch
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Synchronization
import Testing

/// A service's own sample source that takes its time (2 s here, or as long as a gate stays shut)
/// holds up only the reading that waits for it: the sources are read with no lock held, so the
/// ladder's measurement and the heaps' admission go on meanwhile (issue 36; both waited behind the
/// sampler's lock, held across every source).
struct SlowSampleSourceTests {
    /// Reports a fixed footprint; once armed, the first read to come blocks until the gate opens
    /// (at most 30 s: a bound that only a read held up behind the blocked one reaches, even under
    /// ThreadSanitizer on a loaded machine), and every other read returns at once.
    final class GatedSource: MemorySampleSource {
        let armed = Atomic<Bool>(false)
        let blocked = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        var name: String { "gated" }
        var depth: SampleDepth { .cheap }

        func read(into sample: inout MemorySample) throws {
            sample.residentBytes = 64 << 20
            guard armed.exchange(false, ordering: .acquiringAndReleasing) else { return }
            blocked.signal()
            _ = gate.wait(timeout: .now() + 30)
        }
    }

    @Test func aSlowSourceHoldsUpNeitherTheLaddersMeasurementNorAHeapAdmission() async throws {
        let source = GatedSource()
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 30, logger: silentLogger)
        configuration.monitor.sources = [source]
        let system = try MemorySystem(configuration: configuration)
        let heap = try system.heap(for: .test("tenant"))
        let events = system.monitor.events.stream()
        try await system.running {
            // Once the monitor samples (its thread has started, however loaded the machine), a
            // sample asked for now blocks its thread in the source.
            #expect(await events.first(within: .seconds(120)) { $0.sample != nil } != nil, "the monitor samples")
            source.armed.store(true, ordering: .releasing)
            system.monitor.sampleNow()
            #expect(await LifecycleContractTests.wait(for: source.blocked))
            // Meanwhile, on this thread: both are done before the source's read returns.
            let measured = system.monitor.measure()
            let buffer = try heap.allocate(byteCount: 1 << 20)
            // Opening the gate wakes the read only while it still waits there.
            let stillBlocked = source.gate.signal() != 0
            #expect(measured.residentBytes == 64 << 20)
            #expect(buffer.byteCount == 1 << 20)
            #expect(stillBlocked, "the monitor's read was still blocked in the source")
        }
    }
}
