import CJemalloc
import Dispatch
import Synchronization

/// Returning a large purge's pages on several cores, and keeping frees from purging on their own
/// while a purge is coming.
///
/// Measured on this project's machines (BENCHMARKS.md, *Purge from the crossing*): a purge of 1 GiB
/// of 1 MiB payloads over ten apps' arenas is kernel time, zapping page tables and freeing pages.
/// On one thread it took 1.3x to 1.4x a single `madvise` of 1 GiB of freshly touched pages; on two
/// threads, each purging whole arenas, 0.7x to 1.1x. jemalloc's all-arenas purge walks the arenas
/// one after another on the calling thread, so the purge is split here, arena by arena.
///
/// A free that coalesces a run of large extents past the arena's `oversize_threshold` (8 MiB by
/// default) purges that run at once, on the freeing thread. When a caller frees a gigabyte and then
/// purges, about a third of the pages went back that way, one thread's worth, before the parallel
/// purge began; ``deferringEagerPurges(_:)`` leaves them to the purge.
extension Jemalloc {
    /// Returns the unused dirty pages of every arena to the operating system, each arena purged
    /// whole by one of up to `threads` threads (the calling thread among them), which take the
    /// arenas in turn until none is left. With one thread, or one arena, it is
    /// ``purgeAllArenas()``.
    ///
    /// Like every arena command it runs with no other under way, so no arena is destroyed while it
    /// is purged. Arenas destroyed before the purge are skipped.
    package static func purgeAllArenas(threads: Int) throws(JemallocError) {
        let arenaCount = try MallctlKey.arenaCount.read()
        let threads = min(max(1, threads), Int(arenaCount))
        guard threads > 1 else { return try purgeAllArenas() }
        try ArenaMaintenance.serialize { () throws(JemallocError) in
            let next = Atomic<UInt32>(0)
            let failure = Mutex<JemallocError?>(nil)
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                while true {
                    let index = next.add(1, ordering: .relaxed).oldValue
                    guard index < arenaCount else { return }
                    let name = "arena.\(index).purge"
                    let status = mallctl(name, nil, nil, nil, 0)
                    guard status != 0 else { continue }
                    let error = JemallocError(key: name, errno: status, statisticsEnabled: Mallctl.statisticsEnabled)
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
            if let error = failure.withLock({ $0 }) { throw error }
        }
    }

    /// Runs `body` with every arena's eager purge of oversize extents turned off, so that the
    /// pages `body` frees stay dirty until the purge the caller makes after it.
    ///
    /// Calls may overlap on several threads: the first to begin turns eager purging off, and the
    /// last to end turns it back on at jemalloc's threshold (`opt.oversize_threshold`). Arenas
    /// created meanwhile purge eagerly as usual. Only the mallctl writes run under this type's lock,
    /// never `body`.
    package static func deferringEagerPurges<Result, Failure: Error>(
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        EagerPurgeDeferral.begin()
        defer { EagerPurgeDeferral.end() }
        return try body()
    }
}

/// How many callers are inside ``Jemalloc/deferringEagerPurges(_:)``, and the writes that turn
/// eager purging off for the first and on again after the last.
private enum EagerPurgeDeferral {
    private static let depth = Mutex(0)

    static func begin() {
        depth.withLock { depth in
            if depth == 0 { setThreshold(Int.max) }
            depth += 1
        }
    }

    static func end() {
        depth.withLock { depth in
            depth -= 1
            if depth == 0, let standard = try? MallctlKey.oversizeThreshold.read() { setThreshold(standard) }
        }
    }

    /// Writes `arena.<i>.oversize_threshold` of every arena; an index whose arena was destroyed
    /// refuses the write, which is ignored.
    ///
    /// jemalloc looks the arena up and writes into it without the lock that its destruction takes,
    /// so the writes run as an arena command, with no destruction under way (the one nesting of
    /// this module's locks: the depth's, then the arena commands').
    private static func setThreshold(_ bytes: Int) {
        guard let arenaCount = try? MallctlKey.arenaCount.read() else { return }
        try? ArenaMaintenance.serialize { () throws(JemallocError) in
            for index in 0..<arenaCount {
                try? Mallctl.write("arena.\(index).oversize_threshold", bytes)
            }
        }
    }
}
