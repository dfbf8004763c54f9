import Jemalloc
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

/// Backing stores against the real allocator.
@Suite(.serialized, .exclusiveMemoryUse)
struct BackingStoreTests {
    static func store(in heap: AppHeap, shade: UInt8 = 0x5A) throws -> BackingStore {
        try BackingStore(width: 256, height: 128, in: heap) { pixels in
            pixels.initializeMemory(as: UInt8.self, repeating: shade)
        }
    }

    @Test func rendersOnFirstUseAndAfterEachRelease() throws {
        let heap = try AppHeap(app: .test("store"))
        let store = try Self.store(in: heap)
        #expect(store.byteCount == 0 && store.renderCount == 0)

        #expect(try store.withPixels { $0.allSatisfy { $0 == 0x5A } })
        #expect(store.byteCount == 256 * 128 * 4)
        #expect(heap.allocatedBytes == 256 * 128 * 4)
        _ = try store.withPixels { $0.count }
        #expect(store.renderCount == 1)

        #expect(store.release() == 256 * 128 * 4)
        #expect(store.release() == 0)
        #expect(store.byteCount == 0 && heap.allocatedBytes == 0)

        #expect(try store.withPixels { $0.allSatisfy { $0 == 0x5A } })
        #expect(store.renderCount == 2)
    }

    @Test func badDimensionsAreTypedErrors() throws {
        let heap = try AppHeap(app: .test("dimensions"))
        let zero = #expect(throws: MemoryPressureError.self) {
            try BackingStore(width: 0, height: 10, in: heap) { _ in }
        }
        #expect(zero?.code == .invalidArgument)
        #expect(zero?.description == "backing store of 0 x 10 x 4 bytes per pixel is invalid; expected each at least 1 and a total that fits in Int")
        let overflow = #expect(throws: MemoryPressureError.self) {
            try BackingStore(width: .max, height: 2, in: heap) { _ in }
        }
        #expect(overflow?.code == .invalidArgument)
        #expect(
            overflow?.description
                == "backing store of 9223372036854775807 x 2 x 4 bytes per pixel is invalid; expected each at least 1 and a total that fits in Int"
        )
    }

    @Test func aClosedHeapRefusesToRender() throws {
        let heap = try AppHeap(app: .test("closed-store"))
        let store = try Self.store(in: heap)
        heap.close()
        let error = #expect(throws: MemoryPressureError.self) { try store.withPixels { $0.count } }
        #expect(error?.code == .heapClosed)
        #expect(error?.app == .test("closed-store"))
        #expect(error?.description == "the heap of app closed-store is closed; it makes no new buffers")
    }

    @Test func aRendererThatReadsItsOwnStoreGetsATypedErrorAndTheStoreStillRenders() throws {
        let heap = try AppHeap(app: .test("reentrant-store"))
        let nested = Mutex<MemoryPressureError?>(nil)
        let holder = Mutex<BackingStore?>(nil)
        // Rendered again on every use from its own renderer, it recursed until the stack overflowed.
        let store = try BackingStore(width: 16, height: 16, in: heap) { pixels in
            pixels.initializeMemory(as: UInt8.self, repeating: 7)
            guard let store = holder.withLock({ $0 }) else { return }
            do throws(MemoryPressureError) {
                _ = try store.withPixels { $0.count }
            } catch {
                nested.withLock { $0 = error }
            }
        }
        holder.withLock { $0 = store }
        #expect(try store.withPixels { $0.allSatisfy { $0 == 7 } })
        let error = try #require(nested.withLock { $0 })
        #expect(error.code == .reentrantCall)
        #expect(
            error.description
                == "the renderer of a 16 x 16 backing store read that store while drawing it; a renderer draws into the bytes it is given and must not read its own store's pixels"
        )
        #expect(store.renderCount == 1 && heap.allocatedBytes == 16 * 16 * 4)
        // The refusal belongs to the rendering thread's draw alone: the next use renders as before.
        store.release()
        nested.withLock { $0 = nil }
        #expect(try store.withPixels { $0.count } == 16 * 16 * 4)
        #expect(store.renderCount == 2)
        #expect(nested.withLock { $0?.code } == .reentrantCall)
        holder.withLock { $0 = nil }
    }

    @Test func aRendererMayReadAnotherStore() throws {
        let heap = try AppHeap(app: .test("two-stores"))
        let other = try Self.store(in: heap, shade: 3)
        let store = try BackingStore(width: 8, height: 8, in: heap) { pixels in
            let shade = (try? other.withPixels { $0.first ?? 0 }) ?? 0
            pixels.initializeMemory(as: UInt8.self, repeating: shade)
        }
        #expect(try store.withPixels { $0.allSatisfy { $0 == 3 } })
    }
}
