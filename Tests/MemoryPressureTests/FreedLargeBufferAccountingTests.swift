@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// A large heap buffer freed while the budget is held, against the real allocator: its pages stay
/// resident in its arena until jemalloc's decay or a purge returns them, so the budget's account
/// keeps counting them until a sample has measured what is resident. Another app cannot fault in
/// as much again meanwhile (the stampede's occasional overshoot of the budget, 1.02x to 1.03x).
@Suite(.serialized, .exclusiveMemoryUse)
struct FreedLargeBufferAccountingTests {
    @Test func aFreedLargeBufferCountsUntilASampleMeasuresWhatIsResident() throws {
        let account = FootprintAccount(
            budget: try MemoryBudget(totalBytes: 1 << 30), admissionWait: .milliseconds(20), timers: DeadlineTimers(), logger: silentLogger
        ) { _, _ in }
        account.holdBudget(true)
        let heap = try AppHeap(app: .test("large"), account: account)
        let byteCount = 4 << 20
        var buffer: HeapBuffer? = try heap.allocate(byteCount: byteCount)
        let held = account.footprintBytes
        #expect(held >= byteCount)
        #expect(buffer?.byteCount == byteCount)
        buffer = nil

        // The heap's own count is exact at once; the account's footprint is not lowered by a free.
        #expect(heap.allocatedBytes == 0)
        #expect(account.footprintBytes == held, "the freed buffer's pages still count")

        // A sample sets the account's base from what it measures: here, the pages returned.
        let measured = 64 << 20
        let snapshot = account.snapshot()
        var sample = MemorySample(time: .now, residentBytes: measured)
        account.complete(&sample, from: snapshot)
        #expect(account.footprintBytes == measured, "the room the free made is the room the sample saw")
    }
}
