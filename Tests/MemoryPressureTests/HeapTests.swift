import Jemalloc
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryTestSupport
import Testing

/// Per-app heaps against the real allocator.
@Suite(.serialized, .exclusiveMemoryUse)
struct HeapTests {
    static let mebibyte = 1 << 20

    @Test func buffersAreCountedToTheirAppsArena() throws {
        let heap = try AppHeap(app: .test("counted"))
        try Jemalloc.advanceEpoch()
        let before = try heap.statistics().allocated
        let buffer = try heap.allocate(byteCount: 8 * Self.mebibyte)
        try Jemalloc.advanceEpoch()
        #expect(try heap.statistics().allocated - before >= 8 * Self.mebibyte)
        #expect(heap.allocatedBytes == 8 * Self.mebibyte)
        #expect(buffer.heap === heap)
        withExtendedLifetime(buffer) {}
    }

    @Test func bytesWrittenAreReadBack() throws {
        let heap = try AppHeap(app: .test("bytes"))
        let buffer = try heap.allocate(byteCount: 4096, zeroed: true)
        #expect(buffer.withUnsafeBytes { $0.allSatisfy { $0 == 0 } })
        buffer.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 7) }
        #expect(buffer.withUnsafeBytes { $0.reduce(0) { $0 + Int($1) } } == 7 * 4096)
    }

    @Test func freeingABufferLowersTheCount() throws {
        let heap = try AppHeap(app: .test("freed"))
        do {
            let buffer = try heap.allocate(byteCount: 3 * Self.mebibyte)
            #expect(heap.allocatedBytes == 3 * Self.mebibyte)
            withExtendedLifetime(buffer) {}
        }
        #expect(heap.allocatedBytes == 0)
        try Jemalloc.advanceEpoch()
        #expect(try heap.statistics().allocated == 0)
    }

    @Test func closingWaitsForTheLastBufferBeforeDestroyingTheArena() throws {
        let heap = try AppHeap(app: .test("closing"))
        var buffer: HeapBuffer? = try heap.allocate(byteCount: Self.mebibyte)
        #expect(heap.close() == false)
        #expect(try heap.arena.isInitialized)
        // The live buffer is still fully usable.
        buffer?.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 1) }
        let error = #expect(throws: MemoryPressureError.self) { try heap.allocate(byteCount: 16) }
        #expect(error?.code == .heapClosed)
        #expect(error?.app == .test("closing"))
        #expect(error?.description == "the heap of app closing is closed; it makes no new buffers")

        buffer = nil
        #expect(heap.core.isFinished)
        #expect(try heap.arena.isInitialized == false)
    }

    @Test func closingAnEmptyHeapDestroysItAtOnce() throws {
        let heap = try AppHeap(app: .test("empty"))
        #expect(heap.close())
        #expect(try heap.arena.isInitialized == false)
    }

    @Test func droppingTheHeapDestroysItsArenaAfterTheLastBuffer() throws {
        var heap: AppHeap? = try AppHeap(app: .test("dropped"))
        let arena = heap!.arena
        var buffer: HeapBuffer? = try heap!.allocate(byteCount: Self.mebibyte)
        heap = nil
        #expect(try arena.isInitialized)
        #expect(buffer!.withUnsafeBytes { $0.count } == Self.mebibyte)
        buffer = nil
        #expect(try arena.isInitialized == false)
    }

    @Test func badByteCountsAreAllocatorErrors() throws {
        let heap = try AppHeap(app: .test("bad"))
        let error = #expect(throws: MemoryPressureError.self) { try heap.allocate(byteCount: 0) }
        #expect(error?.code == .allocationFailed)
        #expect(error?.description == "jemalloc mallocx(0, align 16): invalid value or value size (byte counts must be 1 or more)")
        #expect(heap.allocatedBytes == 0)
        #expect(heap.close())
    }
}
