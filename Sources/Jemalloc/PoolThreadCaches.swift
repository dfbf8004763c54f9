#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CJemalloc

/// The calling thread's explicit jemalloc caches (`tcache.create`), one per ``ArenaPool`` slot, made
/// on the thread's first allocation in that slot and destroyed (their objects flushed back to their
/// arena) when the thread exits; and in front of each, a few small objects the thread freed, ready
/// to be handed out again.
///
/// An explicit cache is not thread-safe, and a cache hands out whatever objects it holds whatever
/// arena is asked for. A cache used by one thread only, and only for one arena, avoids both: its
/// bins never mix arenas, so an object allocated through it always lives in its arena, and no lock
/// is taken on the way. An object freed on another thread goes into that thread's cache for the
/// same arena. The pool's arenas are never destroyed, so no cache has to be flushed before one is.
///
/// `mallocx` and `sdallocx` with flags take jemalloc's general path, about twice the cost of
/// `malloc` and `free`; the objects kept in front of the cache (``smallLimit`` bytes or less,
/// ``keptPerSize`` of each 16-byte size, so at most 17 KiB per thread and slot) are handed out
/// and taken back for the cost of a push and a pop. Like the objects in jemalloc's own cache, they
/// stay allocated in their arena until reused or the thread exits.
///
/// jemalloc has 4,096 explicit caches in all; a thread that cannot make one allocates in that slot
/// without a cache (correct, about 100 ns slower).
@usableFromInline
enum PoolThreadCaches {
    /// Allocations of at most this many bytes (and alignment at most 16) are kept in front of the
    /// cache when freed.
    @inlinable static var smallLimit: Int { 256 }
    /// How many objects of each 16-byte size a thread keeps per slot.
    @inlinable static var keptPerSize: Int { 8 }
    /// Words per size: the count, then the objects.
    @inlinable static var sizeStride: Int { 1 + keptPerSize }
    private static var sizeCount: Int { smallLimit / 16 }

    /// One slot's cache on one thread: the `mallocx` flags naming the arena and the cache (0 until
    /// made), the cache's index (-1 when none could be made), and the objects kept in front of it
    /// (`sizeCount` runs of `sizeStride` words: a count, then addresses), made with the flags.
    @usableFromInline
    struct Entry {
        @usableFromInline var flags: Int32
        @usableFromInline var cache: Int32
        @usableFromInline var kept: UnsafeMutablePointer<Int>?

        @usableFromInline
        init(flags: Int32, cache: Int32, kept: UnsafeMutablePointer<Int>?) {
            self.flags = flags
            self.cache = cache
            self.kept = kept
        }
    }

    /// A new key for one pool's entries on each thread, `ArenaPool.maximumCapacity` of them,
    /// freed with the thread. Each pool has a key of its own, so that a thread's caches and kept
    /// objects for one pool's slot never serve another pool's slot at the same position; its slots
    /// copy it, so that the allocation path reads no global.
    static func makeKey() -> pthread_key_t {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { entries in
            guard let entries else { return }
            PoolThreadCaches.destroy(entries.assumingMemoryBound(to: Entry.self))
        }
        precondition(status == 0, "pthread_key_create failed: errno \(status)")
        return key
    }

    /// Allocates `byteCount` bytes (at most ``smallLimit``), aligned to 16, in `arena`, the arena
    /// of pool slot `slot`: an object the thread kept, or one from its cache for the slot.
    @inlinable @inline(__always)
    static func allocateSmall(byteCount: Int, zeroed: Bool, key: pthread_key_t, slot: Int, arena: Arena) -> UnsafeMutableRawPointer? {
        let entry = entry(key: key, slot: slot, arena: arena)
        let kept = entry.pointee.kept.unsafelyUnwrapped + ((byteCount &- 1) >> 4) &* sizeStride
        let count = kept.pointee
        guard count > 0, let object = UnsafeMutableRawPointer(bitPattern: kept[count]) else {
            let flags = entry.pointee.flags
            return mallocx(sizeClass(of: byteCount), zeroed ? flags | cjemalloc_mallocx_zero() : flags)
        }
        kept.pointee = count &- 1
        if zeroed { memset(object, 0, byteCount) }
        return object
    }

    /// Frees `byteCount` bytes from ``allocateSmall(byteCount:zeroed:key:slot:arena:)`` for the
    /// same slot: kept by the thread, or into its cache when it keeps enough of that size.
    @inlinable @inline(__always)
    static func deallocateSmall(_ object: UnsafeMutableRawPointer, byteCount: Int, key: pthread_key_t, slot: Int, arena: Arena) {
        let entry = entry(key: key, slot: slot, arena: arena)
        let kept = entry.pointee.kept.unsafelyUnwrapped + ((byteCount &- 1) >> 4) &* sizeStride
        let count = kept.pointee
        guard count < keptPerSize else {
            sdallocx(object, sizeClass(of: byteCount), entry.pointee.flags)
            return
        }
        kept[count &+ 1] = Int(bitPattern: object)
        kept.pointee = count &+ 1
    }

    /// The flags that allocate in `arena`, the arena of pool slot `slot`, through the calling
    /// thread's cache for it, found under `key` (``key``): made on first use.
    @inlinable @inline(__always)
    static func flags(key: pthread_key_t, slot: Int, arena: Arena) -> Int32 {
        entry(key: key, slot: slot, arena: arena).pointee.flags
    }

    /// The size every small object of `byteCount`'s 16-byte size is allocated and freed with, so
    /// that the objects kept for one size are all of one jemalloc size class.
    @inlinable
    static func sizeClass(of byteCount: Int) -> Int {
        (byteCount &+ 15) & ~15
    }

    /// The calling thread's entry for slot `slot`, its cache made on first use.
    @inlinable @inline(__always)
    static func entry(key: pthread_key_t, slot: Int, arena: Arena) -> UnsafeMutablePointer<Entry> {
        let entry = (pthread_getspecific(key)?.assumingMemoryBound(to: Entry.self) ?? makeEntries(key)) + slot
        if entry.pointee.flags == 0 { makeCache(in: entry, arena: arena) }
        return entry
    }

    @usableFromInline @inline(never)
    static func makeEntries(_ key: pthread_key_t) -> UnsafeMutablePointer<Entry> {
        let entries = UnsafeMutablePointer<Entry>.allocate(capacity: ArenaPool.maximumCapacity)
        entries.initialize(repeating: Entry(flags: 0, cache: -1, kept: nil), count: ArenaPool.maximumCapacity)
        pthread_setspecific(key, entries)
        return entries
    }

    @usableFromInline @inline(never)
    static func makeCache(in entry: UnsafeMutablePointer<Entry>, arena: Arena) {
        let arenaFlags = cjemalloc_mallocx_arena(arena.index)
        let kept = UnsafeMutablePointer<Int>.allocate(capacity: sizeCount * sizeStride)
        kept.initialize(repeating: 0, count: sizeCount * sizeStride)
        if let cache = try? MallctlKey<UInt32>("tcache.create").read() {
            entry.pointee = Entry(flags: arenaFlags | cjemalloc_mallocx_tcache(cache), cache: Int32(cache), kept: kept)
        } else {
            entry.pointee = Entry(flags: arenaFlags | cjemalloc_mallocx_tcache_none(), cache: -1, kept: kept)
        }
    }

    /// Frees the objects a thread kept and destroys its caches at its exit, returning their objects
    /// to their arenas.
    private static func destroy(_ entries: UnsafeMutablePointer<Entry>) {
        for slot in 0..<ArenaPool.maximumCapacity {
            guard let kept = entries[slot].kept else { continue }
            for size in 0..<sizeCount {
                let run = kept + size * sizeStride
                for index in 0..<run.pointee {
                    sdallocx(UnsafeMutableRawPointer(bitPattern: run[1 + index]), (size + 1) * 16, entries[slot].flags)
                }
            }
            kept.deallocate()
            if entries[slot].cache >= 0 {
                try? MallctlKey<UInt32>("tcache.destroy").write(UInt32(entries[slot].cache))
            }
        }
        entries.deallocate()
    }
}
