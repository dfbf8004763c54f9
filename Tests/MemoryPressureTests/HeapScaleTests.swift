@_spi(AppHeaps) import Jemalloc
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import Testing

/// Heaps at the scale of a service hosting tenants as apps, against the real allocator: they share
/// the arena pool, count their bytes exactly, and give their pages back when their app goes.
@Suite(.serialized, .exclusiveMemoryUse)
struct HeapScaleTests {
    @Test(.timeLimit(.minutes(1)))
    func tenThousandAppsWithHeapsAreMadeUsedAndTerminated() throws {
        let registry = PurgeRegistry()
        let apps = (0..<10_000).map { AppIdentifier.test("tenant-\($0)") }
        var raw: [AppIdentifier: [UnsafeMutableRawBufferPointer]] = [:]
        var buffers: [AppIdentifier: HeapBuffer] = [:]
        for (number, app) in apps.enumerated() {
            let heap = try registry.heap(for: app)
            raw[app] = try (0..<(number % 5 + 1)).map { index in try heap.allocateBytes(byteCount: 32 * (index + 1) + number % 7) }
            buffers[app] = try heap.allocate(byteCount: 4096 + number)
        }
        // Every footprint is exactly what its heap holds, whatever arena the heap shares.
        for (number, app) in apps.enumerated() {
            let expected = (0..<(number % 5 + 1)).reduce(0) { $0 + 32 * ($1 + 1) + number % 7 } + 4096 + number
            #expect(registry.footprint(of: app).heapBytes == expected, "\(app)")
        }
        #expect(Set(apps.map { try! registry.heap(for: $0).poolSlot }).count <= ArenaPool.maximumCapacity)

        for app in apps {
            let heap = try #require(registry.removeApp(app))
            #expect(!heap.core.isFinished)
            for bytes in raw.removeValue(forKey: app)! { heap.deallocate(bytes) }
            buffers[app] = nil
            #expect(heap.core.isFinished)
            #expect(heap.allocatedBytes == 0)
        }
        #expect(registry.owners.isEmpty)
    }

    @Test func aTerminationInThePoolReturnsTheAppsPagesAtOnce() throws {
        let registry = PurgeRegistry()
        // Neighbours in the pool keep their bytes.
        let neighbours = try (0..<8).map { try registry.heap(for: .test("neighbour-\($0)")) }
        let neighbourBuffers = try neighbours.map { try residentBuffers(in: $0, totalBytes: 2 * mebibyte) }
        let returned = try Self.bytesReturnedAtOnce(by: .test("pooled"), in: registry, holding: 64 * mebibyte)
        #expect(returned >= 64 * mebibyte * 9 / 10, "returned \(returned) bytes of 64 MiB")
        #expect(neighbours.allSatisfy { $0.allocatedBytes == 2 * mebibyte && !$0.core.isFinished })
        withExtendedLifetime(neighbourBuffers) {}
    }

    @Test func aTerminationWithAnOwnArenaReturnsTheAppsPagesAtOnce() throws {
        let registry = PurgeRegistry(heapArenas: .ownArenaFromCreation)
        let returned = try Self.bytesReturnedAtOnce(by: .test("own"), in: registry, holding: 64 * mebibyte)
        #expect(returned >= 64 * mebibyte * 9 / 10, "returned \(returned) bytes of 64 MiB")
    }

    @Test func aHeapPastItsThresholdTakesAnOwnArenaForItsNextBuffers() throws {
        let registry = PurgeRegistry(heapArenas: HeapArenaPolicy(ownArenaThreshold: 8 * mebibyte))
        let heap = try registry.heap(for: .test("growing"))
        var buffers = try residentBuffers(in: heap, totalBytes: 7 * mebibyte)
        #expect(heap.arena == heap.poolSlot.arena)
        buffers += try residentBuffers(in: heap, totalBytes: 2 * mebibyte)
        let ownArena = heap.arena
        #expect(ownArena != heap.poolSlot.arena)
        #expect(try ownArena.isInitialized)
        #expect(registry.footprint(of: .test("growing")).heapBytes == 9 * mebibyte)

        registry.removeApp(.test("growing"))
        #expect(!heap.core.isFinished)
        buffers.removeAll()
        #expect(heap.core.isFinished)
        #expect(try ownArena.isInitialized == false)
    }

    @Test func rawAllocationsAreCountedFreedOnAnyThreadAndRefusedOnceClosed() async throws {
        let heap = try AppHeap(app: .test("raw"), account: nil)
        let bytes = try (1...100).map { try heap.allocateBytes(byteCount: $0 * 8, zeroed: true) }
        #expect(bytes.allSatisfy { $0.allSatisfy { $0 == 0 } })
        #expect(heap.allocatedBytes == (1...100).reduce(0) { $0 + $1 * 8 })
        for buffer in bytes { buffer.initializeMemory(as: UInt8.self, repeating: 0xA5) }

        // Freed on other threads, into their own caches for the same arena.
        let addresses = bytes.map { (Int(bitPattern: $0.baseAddress), $0.count) }
        await withTaskGroup(of: Void.self) { group in
            for part in 0..<4 {
                group.addTask {
                    for (address, count) in addresses[(part * 25)..<(part * 25 + 25)] {
                        heap.deallocate(UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(bitPattern: address), count: count))
                    }
                }
            }
        }
        #expect(heap.allocatedBytes == 0)

        let kept = try heap.allocateBytes(byteCount: 256)
        #expect(heap.close() == false)
        let error = #expect(throws: MemoryPressureError.self) { try heap.allocateBytes(byteCount: 16) }
        #expect(error?.code == .heapClosed)
        kept.storeBytes(of: 7, as: Int.self)
        heap.deallocate(kept)
        #expect(heap.core.isFinished)
    }

    @Test func rawAllocationsAreAdmittedAgainstTheHardLimit() async throws {
        let system = try MemorySystem(configuration: .init(budget: try MemoryBudget(totalBytes: 1 << 30)))
        let heap = try system.heap(for: .test("limited"))
        system.registry.setHardLimit(1000, for: .test("limited"))
        let first = try heap.allocateBytes(byteCount: 600)
        let error = #expect(throws: MemoryPressureError.self) { try heap.allocateBytes(byteCount: 600) }
        #expect(error?.code == .allocationRefused)
        #expect(heap.allocatedBytes == 600)
        #expect(system.footprint(of: .test("limited")).heapBytes == 600)
        heap.deallocate(first)
        #expect(heap.allocatedBytes == 0)
    }

    /// The process's resident bytes given back at once when `app`, holding `bytes` of resident
    /// 1 MiB buffers in its heap, is removed and its buffers freed: no purge of all arenas, no
    /// waiting for decay.
    /// The bytes of `app`'s buffers the kernel has back once the app is removed and its buffers
    /// freed: their own pages, counted by `mincore`, so that other suites' allocations meanwhile
    /// do not count.
    static func bytesReturnedAtOnce(by app: AppIdentifier, in registry: PurgeRegistry, holding bytes: Int) throws -> Int {
        var buffers = try residentBuffers(in: registry.heap(for: app), totalBytes: bytes)
        #expect(registry.footprint(of: app).heapBytes == bytes)
        let regions = buffers.map { $0.withUnsafeMutableBytes { (address: Int(bitPattern: $0.baseAddress), count: $0.count) } }
        let withBuffers = residentBytes(of: regions)
        #expect(withBuffers >= bytes, "\(withBuffers) bytes of the buffers' \(bytes) resident")
        let heap = try #require(registry.removeApp(app))
        buffers.removeAll()
        #expect(heap.core.isFinished)
        return withBuffers - residentBytes(of: regions)
    }
}
