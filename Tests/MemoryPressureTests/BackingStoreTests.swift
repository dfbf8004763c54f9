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
        #expect(throws: CacheError.invalidDimensions(width: 0, height: 10, bytesPerPixel: 4)) {
            try BackingStore(width: 0, height: 10, in: heap) { _ in }
        }
        #expect(throws: CacheError.invalidDimensions(width: .max, height: 2, bytesPerPixel: 4)) {
            try BackingStore(width: .max, height: 2, in: heap) { _ in }
        }
    }

    @Test func aClosedHeapRefusesToRender() throws {
        let heap = try AppHeap(app: .test("closed-store"))
        let store = try Self.store(in: heap)
        heap.close()
        #expect(throws: AppHeapError.closed(.test("closed-store"))) { try store.withPixels { $0.count } }
    }
}
