#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CJemalloc

/// The calling thread's explicit jemalloc caches (`tcache.create`), one per ``ArenaPool`` slot, made
/// on the thread's first allocation in that slot and destroyed (their objects flushed back to their
/// arena) when the thread exits.
///
/// An explicit cache is not thread-safe, and a cache hands out whatever objects it holds whatever
/// arena is asked for. A cache used by one thread only, and only for one arena, avoids both: its
/// bins never mix arenas, so an object allocated through it always lives in its arena, and no lock
/// is taken on the way. An object freed on another thread goes into that thread's cache for the
/// same arena. The pool's arenas are never destroyed, so no cache has to be flushed before one is.
///
/// jemalloc has 4,096 explicit caches in all; a thread that cannot make one allocates in that slot
/// without a cache (correct, about 100 ns slower).
enum PoolThreadCaches {
    /// One slot's cache on one thread: the `mallocx` flags naming the arena and the cache (0 until
    /// made), and the cache's index (-1 when none could be made).
    private struct Entry {
        var flags: Int32
        var cache: Int32
    }

    /// The key of the thread's entries, `ArenaPool.maximumCapacity` of them, freed with the
    /// thread. A pool copies it, so that the allocation path reads no lazily made global.
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { entries in
            guard let entries else { return }
            PoolThreadCaches.destroy(entries.assumingMemoryBound(to: Entry.self))
        }
        precondition(status == 0, "pthread_key_create failed: errno \(status)")
        return key
    }()

    /// The flags that allocate in `arena`, the arena of pool slot `slot`, through the calling
    /// thread's cache for it, found under `key` (``key``): made on first use.
    @inline(__always)
    static func flags(key: pthread_key_t, slot: Int, arena: Arena) -> Int32 {
        let entries = pthread_getspecific(key)?.assumingMemoryBound(to: Entry.self) ?? makeEntries()
        let flags = entries[slot].flags
        if flags != 0 { return flags }
        return makeCache(in: &entries[slot], arena: arena)
    }

    @inline(never)
    private static func makeEntries() -> UnsafeMutablePointer<Entry> {
        let entries = UnsafeMutablePointer<Entry>.allocate(capacity: ArenaPool.maximumCapacity)
        entries.initialize(repeating: Entry(flags: 0, cache: -1), count: ArenaPool.maximumCapacity)
        pthread_setspecific(key, entries)
        return entries
    }

    @inline(never)
    private static func makeCache(in entry: inout Entry, arena: Arena) -> Int32 {
        let arenaFlags = cjemalloc_mallocx_arena(arena.index)
        if let cache = try? MallctlKey<UInt32>("tcache.create").read() {
            entry = Entry(flags: arenaFlags | cjemalloc_mallocx_tcache(cache), cache: Int32(cache))
        } else {
            entry = Entry(flags: arenaFlags | cjemalloc_mallocx_tcache_none(), cache: -1)
        }
        return entry.flags
    }

    /// Destroys a thread's caches at its exit, returning their objects to their arenas.
    private static func destroy(_ entries: UnsafeMutablePointer<Entry>) {
        for slot in 0..<ArenaPool.maximumCapacity where entries[slot].cache >= 0 {
            try? MallctlKey<UInt32>("tcache.destroy").write(UInt32(entries[slot].cache))
        }
        entries.deallocate()
    }
}
