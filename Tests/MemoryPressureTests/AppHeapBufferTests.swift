#if canImport(Glibc)
import Glibc
#endif
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryTestSupport
import Synchronization
import Testing

/// `HeapBuffer`s against the real allocator (issue 26): small ones carry their bytes inline, none
/// retains its heap, and each stays valid, and counted, until it is released, whatever happens to
/// its heap meanwhile.
@Suite(.serialized, .exclusiveMemoryUse)
struct AppHeapBufferTests {
    @Test func inlineAndArenaBuffersAreAlignedZeroedAndCountedExactly() throws {
        let heap = try AppHeap(app: .test("inline"), account: nil)
        let sizes = [1, 15, 16, 17, 255, 256, 257, 4096]
        let buffers = try sizes.map { try heap.allocate(byteCount: $0, zeroed: true) }
        #expect(heap.allocatedBytes == sizes.reduce(0, +))
        for (buffer, size) in zip(buffers, sizes) {
            #expect(buffer.byteCount == size)
            #expect(buffer.withUnsafeBytes { Int(bitPattern: $0.baseAddress) % 16 } == 0)
            #expect(buffer.withUnsafeBytes { $0.count == size && $0.allSatisfy { $0 == 0 } })
            buffer.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: UInt8(size & 0xFF)) }
        }
        // No buffer's bytes overlap another's or its header.
        for (buffer, size) in zip(buffers, sizes) {
            #expect(buffer.withUnsafeBytes { $0.allSatisfy { $0 == UInt8(size & 0xFF) } })
            #expect(buffer.heap === heap)
        }
        withExtendedLifetime(buffers) {}
    }

    /// Runs `body` on `count` threads of their own at once, and returns when every one has ended.
    static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) throws {
        let threads = try (0..<count).map { index in try PosixThread.start(named: "buffer-access") { body(index) } }
        for thread in threads { pthread_join(thread, nil) }
    }

    @Test func anAccessNestedOnTheSameThreadRunsInsideTheOuterOne() throws {
        let heap = try AppHeap(app: .test("nested-access"), account: nil)
        for size in [64, 256, 4096] {
            let buffer = try heap.allocate(byteCount: size, zeroed: true)
            // A read inside a read, and a write inside a read, trapped with "Recursive call to lock".
            let same = buffer.withUnsafeBytes { outer in
                buffer.withUnsafeBytes { inner in outer.baseAddress == inner.baseAddress && inner.count == size }
            }
            #expect(same)
            buffer.withUnsafeBytes { _ in
                buffer.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 9) }
            }
            #expect(buffer.withUnsafeBytes { $0.allSatisfy { $0 == 9 } })
            // After the nested accesses the lock is free: another thread takes it.
            let read = Mutex(0)
            try Self.onThreads(1) { _ in read.withLock { $0 = buffer.withUnsafeBytes { $0.count } } }
            #expect(read.withLock { $0 } == size)
        }
    }

    @Test func accessesFromTwoThreadsStillExcludeEachOther() throws {
        let heap = try AppHeap(app: .test("exclusive-access"), account: nil)
        for size in [8, 4096] {
            let buffer = try heap.allocate(byteCount: size, zeroed: true)
            // A read-modify-write of a plain counter in the bytes: an update lost to an access
            // that did not exclude the other thread's would leave less than the sum.
            let rounds = 20_000
            try Self.onThreads(2) { _ in
                for _ in 0..<rounds {
                    buffer.withUnsafeMutableBytes { bytes in
                        bytes.storeBytes(of: bytes.load(as: Int.self) + 1, as: Int.self)
                    }
                }
            }
            #expect(buffer.withUnsafeBytes { $0.load(as: Int.self) } == 2 * rounds)
        }
    }

    @Test func aBufferOutlivesItsDroppedHeapAndTheLastOneFinishesIt() throws {
        var heap: AppHeap? = try AppHeap(app: .test("dropped-inline"), account: nil)
        let core = heap!.core
        var small: HeapBuffer? = try heap!.allocate(byteCount: 64)
        var large: HeapBuffer? = try heap!.allocate(byteCount: 1 << 20)
        heap = nil
        #expect(small!.heap == nil)
        #expect(!core.isFinished)
        small!.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 3) }
        #expect(small!.withUnsafeBytes { $0.reduce(0) { $0 + Int($1) } } == 3 * 64)
        small = nil
        #expect(core.allocatedBytes == 1 << 20)
        #expect(!core.isFinished)
        #expect(large?.byteCount == 1 << 20)
        large = nil
        #expect(core.isFinished)
        #expect(core.allocatedBytes == 0)
    }

    @Test func aClosedHeapFinishesWithItsLastInlineBuffer() throws {
        let heap = try AppHeap(app: .test("closed-inline"), account: nil)
        var buffers = try (0..<10).map { _ in try heap.allocate(byteCount: 200) }
        #expect(heap.close() == false)
        #expect(heap.close() == false)
        let error = #expect(throws: MemoryPressureError.self) { try heap.allocate(byteCount: 16) }
        #expect(error?.code == .heapClosed)
        #expect(heap.allocatedBytes == 2000)
        buffers.removeLast(9)
        #expect(!heap.core.isFinished)
        buffers.removeAll()
        #expect(heap.core.isFinished)
        #expect(heap.allocatedBytes == 0)
    }

    @Test func buffersReleasedOnManyThreadsWhileTheHeapIsClosedAndDroppedLeaveNothing() async throws {
        for _ in 0..<20 {
            var heap: AppHeap? = try AppHeap(app: .test("racing"), account: nil)
            let core = heap!.core
            var parts = try (0..<4).map { part in
                try (0..<100).map { index in try heap!.allocate(byteCount: index % 3 == 0 ? 1000 : 16 + (part + index) % 240) }
            }
            await withTaskGroup(of: Void.self) { [heap] group in
                while let part = parts.popLast() {
                    // The task holds the only references: its buffers are released on its thread.
                    group.addTask {
                        var part = part
                        while let buffer = part.popLast() {
                            buffer.withUnsafeMutableBytes { $0[0] = 1 }
                        }
                    }
                }
                group.addTask { _ = heap?.close() }
            }
            heap = nil
            #expect(core.allocatedBytes == 0)
            #expect(core.isFinished)
        }
    }
}
