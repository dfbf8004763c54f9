import Jemalloc
import MemoryPressure
import MemoryTestSupport
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
}
