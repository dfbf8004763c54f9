#if canImport(Glibc)
import Glibc
#endif
@_spi(AppHeaps) import Jemalloc
import MemoryTestSupport
import Testing

/// Small objects allocated and freed in a pool slot on a thread of their own; read after the
/// thread is joined.
private final class KeptObjectsWork: @unchecked Sendable {
    let slot: ArenaPool.Slot
    /// Whether the object freed last was handed out again, zeroed as asked.
    var reused = false
    /// The slot arena's small bytes while the thread kept its freed objects.
    var keptBytes = 0

    init(slot: ArenaPool.Slot) {
        self.slot = slot
    }

    func run() {
        let objects = (0..<8).map { _ in slot.allocate(byteCount: 200, alignment: 16, zeroed: false)! }
        for object in objects {
            memset(object, 0xA5, 200)
            slot.deallocate(object, byteCount: 200, alignment: 16)
        }
        let again = slot.allocate(byteCount: 193, alignment: 16, zeroed: true)!
        reused = again == objects.last! && UnsafeRawBufferPointer(start: again, count: 193).allSatisfy { $0 == 0 }
        slot.deallocate(again, byteCount: 193, alignment: 16)
        try! Jemalloc.advanceEpoch()
        keptBytes = try! slot.arena.statistics().smallAllocated
    }
}

/// The process's shared arena pool, against the real allocator.
@Suite(.serialized, .exclusiveMemoryUse)
struct ArenaPoolTests {
    @Test func thePoolIsBoundedAndHandsItsSlotsOutInTurn() throws {
        let pool = try ArenaPool.shared.get()
        #expect((4...ArenaPool.maximumCapacity).contains(pool.slots.count))
        #expect(Set(pool.slots.map(\.arena)).count == pool.slots.count)
        let handed = (0..<(3 * pool.slots.count)).map { _ in pool.nextSlot() }
        #expect(Set(handed) == Set(pool.slots))
    }

    @Test func allocationsLandInTheirSlotsArenaAndComeBackWithAPurge() throws {
        // A pool of its own: no other test allocates or frees in its arenas while this one counts,
        // and no thread keeps objects of it from an earlier test.
        let pool = try ArenaPool(capacity: 2)
        let slot = pool.slots[1]
        let byteCount = 32 << 20
        try Jemalloc.advanceEpoch()
        let before = try slot.arena.statistics()
        let base = try #require(slot.allocate(byteCount: byteCount, alignment: 16, zeroed: true))
        // Small ones too, through this thread's cache for the slot.
        let small = (0..<1000).map { _ in slot.allocate(byteCount: 256, alignment: 16, zeroed: false)! }
        try Jemalloc.advanceEpoch()
        let with = try slot.arena.statistics()
        #expect(with.largeAllocated - before.largeAllocated >= byteCount)
        #expect(with.smallAllocated - before.smallAllocated >= 1000 * 256)

        memset(base, 1, byteCount)
        slot.deallocate(base, byteCount: byteCount, alignment: 16)
        for pointer in small { slot.deallocate(pointer, byteCount: 256, alignment: 16) }
        try pool.purge(slot)
        try Jemalloc.advanceEpoch()
        let after = try slot.arena.statistics()
        #expect(after.largeAllocated == before.largeAllocated)
        #expect(after.dirtyPages == 0)
    }

    @Test func smallObjectsFreedAreKeptByTheThreadAndFreedWhenItExits() throws {
        let pool = try ArenaPool(capacity: 1)
        let slot = pool.slots[0]
        try Jemalloc.advanceEpoch()
        let before = try slot.arena.statistics().smallAllocated
        // On a thread of its own: objects freed there are handed out again (last freed first), and
        // those it still keeps at its exit are freed with its caches.
        let work = KeptObjectsWork(slot: slot)
        var thread = pthread_t()
        pthread_create(&thread, nil, { context in
            Unmanaged<KeptObjectsWork>.fromOpaque(context!).takeUnretainedValue().run()
            return nil
        }, Unmanaged.passUnretained(work).toOpaque())
        pthread_join(thread, nil)
        try Jemalloc.advanceEpoch()
        let after = try slot.arena.statistics().smallAllocated
        #expect(work.reused)
        #expect(work.keptBytes - before >= 8 * 200)
        #expect(work.keptBytes - after >= 8 * 200)
    }

    @Test func aThreadsKeptObjectsOfOnePoolNeverServeAnother() throws {
        let first = try ArenaPool(capacity: 1).slots[0]
        let second = try ArenaPool(capacity: 1).slots[0]
        // An object freed in the first pool's slot is kept by this thread for that slot only.
        let kept = try #require(first.allocate(byteCount: 64, alignment: 16, zeroed: false))
        first.deallocate(kept, byteCount: 64, alignment: 16)
        try Jemalloc.advanceEpoch()
        let before = try second.arena.statistics().smallAllocated
        let other = try #require(second.allocate(byteCount: 64, alignment: 16, zeroed: false))
        try Jemalloc.advanceEpoch()
        #expect(other != kept)
        #expect(try second.arena.statistics().smallAllocated > before)
        second.deallocate(other, byteCount: 64, alignment: 16)
    }

    @Test func overAlignedAllocationsAreAligned() throws {
        let pool = try ArenaPool.shared.get()
        let slot = pool.slots[0]
        for alignment in [16, 64, 4096] {
            for byteCount in [1, 8, 100, 5000] {
                let pointer = try #require(slot.allocate(byteCount: byteCount, alignment: alignment, zeroed: false))
                #expect(Int(bitPattern: pointer) % alignment == 0, "\(byteCount) bytes aligned to \(alignment)")
                slot.deallocate(pointer, byteCount: byteCount, alignment: alignment)
            }
        }
    }

    @Test func runningOutOfArenaIndicesIsALimitNamedAsSuch() {
        let error = JemallocError(key: "arenas.create", errno: EAGAIN, statisticsEnabled: true)
        #expect(error.kind == .arenaLimitReached)
        #expect(error.description == "jemalloc arenas.create: limit reached: every arena index is in use "
            + "(jemalloc makes at most 4095 arenas, automatic ones included) (errno \(EAGAIN))")
        #expect(!error.description.contains("temporarily"))
        // EAGAIN from any other key is still a passing condition.
        #expect(JemallocError(key: "tcache.create", errno: EAGAIN, statisticsEnabled: true).kind == .unavailable)
    }
}
