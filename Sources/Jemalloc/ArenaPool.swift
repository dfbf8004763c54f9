#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CJemalloc
import Synchronization

/// A fixed set of arenas that any number of owners share, made once per process, and allocation in
/// them through the calling thread's own cache for each.
///
/// jemalloc has at most 4,095 arenas, and every arena in the process adds about 9 µs to each epoch
/// refresh, so an arena per owner stops at a few thousand owners and makes statistics ever dearer.
/// The pool has a few arenas (four per core, between 4 and ``maximumCapacity``) and hands its slots
/// out in turn, so owners spread over them. Nothing here counts an owner's bytes: owners count
/// their own (jemalloc's per-arena statistics cannot tell owners apart). The arenas live as long as
/// the process; an owner that lets go of its memory has its arena purged (``purge(_:)``), which
/// returns every free page in it at once.
///
/// Allocation goes through an explicit thread cache per thread and slot (see `PoolThreadCaches`),
/// with a few small objects of each size kept in front of it, so a small allocation costs about
/// what `malloc` does, takes no lock, and always lands in its slot's arena.
///
/// The pool is SPI (`@_spi(AppHeaps)`), not API: public only so that a slot's allocation path can
/// be inlined into `MemoryPressure`'s heaps (the compiler does not inline `package` functions across
/// modules), which saves two calls on a path of a few nanoseconds.
@_spi(AppHeaps)
public final class ArenaPool: Sendable {
    /// One arena of the pool, and allocation in it. A struct, so that its allocation path inlines
    /// into callers in other modules (a class's methods do not).
    public struct Slot: Hashable, Sendable {
        /// The slot's position in the pool.
        @usableFromInline package let position: Int
        /// The slot's arena.
        @usableFromInline package let arena: Arena
        /// The pool's key of the threads' caches (`PoolThreadCaches`), copied into each slot so
        /// that the allocation path reads no global.
        @usableFromInline let cacheKey: pthread_key_t

        init(position: Int, arena: Arena, cacheKey: pthread_key_t) {
            self.position = position
            self.arena = arena
            self.cacheKey = cacheKey
        }

        /// Allocates `byteCount` bytes aligned to `alignment` in the slot's arena, through the
        /// calling thread's cache for it; nil when jemalloc cannot.
        @inlinable @inline(__always)
        public func allocate(byteCount: Int, alignment: Int, zeroed: Bool) -> UnsafeMutableRawPointer? {
            if byteCount <= PoolThreadCaches.smallLimit && alignment <= 16 {
                return PoolThreadCaches.allocateSmall(byteCount: byteCount, zeroed: zeroed, key: cacheKey, slot: position, arena: arena)
            }
            let flags = PoolThreadCaches.flags(key: cacheKey, slot: position, arena: arena) | ArenaPool.alignmentFlags(byteCount, alignment)
            return mallocx(byteCount, zeroed ? flags | cjemalloc_mallocx_zero() : flags)
        }

        /// Frees bytes that ``allocate(byteCount:alignment:zeroed:)`` returned for the same byte
        /// count and alignment, into the calling thread's cache for the slot.
        @inlinable @inline(__always)
        public func deallocate(_ pointer: UnsafeMutableRawPointer, byteCount: Int, alignment: Int) {
            if byteCount <= PoolThreadCaches.smallLimit && alignment <= 16 {
                PoolThreadCaches.deallocateSmall(pointer, byteCount: byteCount, key: cacheKey, slot: position, arena: arena)
                return
            }
            sdallocx(pointer, byteCount, PoolThreadCaches.flags(key: cacheKey, slot: position, arena: arena) | ArenaPool.alignmentFlags(byteCount, alignment))
        }
    }

    /// The most arenas a pool has.
    package static let maximumCapacity = 64

    /// The process's pool, made on first use; fails only when jemalloc cannot make a single arena.
    package static let shared = Result { () throws(JemallocError) in
        try ArenaPool(capacity: min(maximumCapacity, max(4, 4 * Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))))
    }

    /// The pool's slots.
    package let slots: [Slot]
    private let handedOut = Atomic<Int>(0)

    /// Makes up to `capacity` arenas (at most ``maximumCapacity``); fewer when jemalloc runs out of
    /// arena indices, as long as at least one can be made. The process uses ``shared``; a pool of
    /// its own gives a test arenas that nothing else allocates in. Its arenas and its key of the
    /// threads' caches live as long as the process.
    package init(capacity: Int) throws(JemallocError) {
        precondition((1...ArenaPool.maximumCapacity).contains(capacity), "an arena pool has 1 to \(ArenaPool.maximumCapacity) arenas, not \(capacity)")
        let cacheKey = PoolThreadCaches.makeKey()
        var slots: [Slot] = []
        do {
            while slots.count < capacity {
                slots.append(Slot(position: slots.count, arena: try Arena.createWithoutEpochRefresh(), cacheKey: cacheKey))
            }
        } catch where error.kind == .arenaLimitReached && !slots.isEmpty {
            // A smaller pool still holds every owner.
        }
        self.slots = slots
    }

    /// The next slot in turn, for a new owner.
    package func nextSlot() -> Slot {
        slots[handedOut.wrappingAdd(1, ordering: .relaxed).oldValue % slots.count]
    }

    /// Returns every free page of `slot`'s arena to the operating system now.
    package func purge(_ slot: Slot) throws(JemallocError) {
        try slot.arena.purge()
    }

    /// The alignment flag, needed only where the size class alone would not give `alignment`:
    /// jemalloc aligns every size class of 16 bytes or more to at least 16.
    @usableFromInline @inline(__always)
    static func alignmentFlags(_ byteCount: Int, _ alignment: Int) -> Int32 {
        alignment > 16 || alignment > byteCount ? cjemalloc_mallocx_lg_align(UInt32(alignment.trailingZeroBitCount)) : 0
    }
}
