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

/// The registry against the real allocator: footprints, purges and the pages they return.
@Suite(.serialized, .exclusiveMemoryUse)
struct RegistryTests {
    static let mebibyte = 1 << 20

    /// A decoded image's payload, living in its app's heap.
    final class Image: Sendable {
        let payload: HeapBuffer

        init(in heap: AppHeap, byteCount: Int) throws {
            payload = try heap.allocate(byteCount: byteCount)
            payload.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0xC3) }
        }
    }

    @Test func backgroundPurgeReturnsAnImageCachesPagesToTheSystem() throws {
        let registry = PurgeRegistry()
        let app = AppIdentifier.test("gallery")
        let bystander = AppIdentifier.test("bystander")
        let heap = try registry.heap(for: app)
        let cache = try PurgeableCache<Int, Image>(
            name: "thumbnails", owner: app, category: .images, payloadLocation: .appHeap
        )
        registry.register(cache)
        let bystanderCache = try PurgeableCache<Int, Image>(
            name: "other", owner: bystander, category: .images, payloadLocation: .appHeap
        )
        registry.register(bystanderCache)
        try bystanderCache.setValue(Image(in: registry.heap(for: bystander), byteCount: Self.mebibyte), forKey: 0, cost: Self.mebibyte)

        let footprintBefore = registry.footprint(of: app)
        for key in 0..<128 {
            try cache.setValue(Image(in: heap, byteCount: Self.mebibyte), forKey: key, cost: Self.mebibyte)
        }
        let footprintFilled = registry.footprint(of: app)
        #expect(footprintFilled.totalBytes - footprintBefore.totalBytes >= 128 * Self.mebibyte)
        #expect(footprintFilled.declaredBytesOutsideHeap == 0)

        let residentBefore = try JemallocStatistics.current().resident
        let report = registry.purge(.enteringBackground, apps: [app])
        let residentAfter = try JemallocStatistics.current().resident

        #expect(cache.count == 0)
        #expect(bystanderCache.count == 1)
        #expect(residentBefore - residentAfter >= 100 * Self.mebibyte)
        #expect(report.releasedBytes(of: app) == 128 * Self.mebibyte)
        #expect(report.releasedBytes(of: bystander) == 0)
        #expect(report.heapBytesReturned[app] == 128 * Self.mebibyte)
        #expect(report.arenaPurgeFailures.isEmpty)
        #expect(registry.footprint(of: app).heapBytes == 0)
    }

    @Test func backingStoresAreReleasedByEventAndVisibilityAndComeBackRerendered() throws {
        let registry = PurgeRegistry()
        let app = AppIdentifier.test("viewer")
        let heap = try registry.heap(for: app)
        let visible = try BackingStore(width: 512, height: 512, in: heap) { $0.initializeMemory(as: UInt8.self, repeating: 1) }
        let hidden = try BackingStore(width: 512, height: 512, in: heap) { $0.initializeMemory(as: UInt8.self, repeating: 2) }
        visible.isVisible = true
        registry.register(visible, owner: app)
        registry.register(hidden, owner: app)
        #expect(registry.registrations == 3)  // the heap and the two stores
        _ = try visible.withPixels { $0.count }
        _ = try hidden.withPixels { $0.count }
        let storeBytes = 512 * 512 * 4

        let warning = registry.purge(.warning, apps: [app])
        #expect(warning.releasedBytes == storeBytes)
        #expect(visible.byteCount == storeBytes && hidden.byteCount == 0)

        let background = registry.purge(.enteringBackground, apps: [app])
        #expect(background.releasedBytes == storeBytes)
        #expect(heap.allocatedBytes == 0)

        #expect(try visible.withPixels { $0.allSatisfy { $0 == 1 } })
        #expect(try hidden.withPixels { $0.allSatisfy { $0 == 2 } })
        #expect(visible.renderCount == 2 && hidden.renderCount == 2)
    }

    @Test func footprintCountsDeclaredCostOutsideTheHeapAndPurgesItToo() throws {
        let registry = PurgeRegistry()
        let app = AppIdentifier.test("objects")
        let cache = try PurgeableCache<Int, [UInt8]>(name: "parsed", owner: app, category: .rebuildableObjects)
        registry.register(cache)
        for key in 0..<10 { try cache.setValue([UInt8](repeating: 0, count: 1000), forKey: key, cost: 1000) }
        #expect(registry.footprint(of: app) == AppFootprint(heapBytes: 0, declaredBytesOutsideHeap: 10_000))
        #expect(registry.caches(of: app).map(\.name) == ["parsed"])

        let report = registry.purge(.enteringBackground, apps: [app])
        #expect(report.entries == [PurgeReport.Entry(
            app: app, source: .cache(name: "parsed", category: .rebuildableObjects), releasedBytes: 9000, removedCount: 9
        )])
        #expect(registry.footprint(of: app).declaredBytesOutsideHeap == 1000)
    }

    @Test func cachesAreHeldWeakly() throws {
        let registry = PurgeRegistry()
        let app = AppIdentifier.test("weak")
        do {
            let cache = try PurgeableCache<Int, Int>(name: "gone", owner: app, category: .media)
            registry.register(cache)
            #expect(registry.caches(of: app).count == 1)
        }
        #expect(registry.caches(of: app).isEmpty)
    }

    @Test func removingAnAppDestroysItsHeap() throws {
        // Heaps with an arena of their own, so the arena's destruction can be seen (the pool's
        // arenas are shared and live on: HeapScaleTests covers heaps in the pool).
        let registry = PurgeRegistry(heapArenas: .ownArenaFromCreation)
        let app = AppIdentifier.test("terminated")
        let heap = try registry.heap(for: app)
        var buffer: HeapBuffer? = try heap.allocate(byteCount: 2 * Self.mebibyte)
        #expect(registry.owners == [app])
        #expect(registry.removeApp(app) === heap)
        #expect(heap.core.isFinished == false)
        #expect(registry.owners.isEmpty)
        #expect(try heap.arena.isInitialized)
        #expect(buffer?.byteCount == 2 * Self.mebibyte)
        buffer = nil
        #expect(try heap.arena.isInitialized == false)
        #expect(heap.core.isFinished)
        #expect(registry.removeApp(app) == nil)
    }
}
