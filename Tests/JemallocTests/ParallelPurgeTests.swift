import Dispatch
import Jemalloc
import MemoryTestSupport
import Synchronization
import Testing

/// The purge spread over threads and the deferral of eager purges, against the real allocator.
/// They read and write process-wide state (arena statistics, every arena's threshold), so they run
/// one at a time.
@Suite(.serialized, .exclusiveMemoryUse)
struct ParallelPurgeTests {
    static let mebibyte = 1 << 20

    /// A created arena whose freed pages never decay, so they stay dirty until purged.
    static func arenaKeepingDirtyPages() throws -> Arena {
        let arena = try Arena.create()
        try MallctlKey<Int>("arena.\(arena.index).dirty_decay_ms").write(-1)
        return arena
    }

    /// One touched 1 MiB buffer, freed when released.
    final class Buffer {
        var allocation: ArenaAllocation

        init(in arena: Arena) throws {
            allocation = try arena.allocate(byteCount: mebibyte)
            allocation.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0xA5) }
        }
    }

    /// Allocates `count` touched 1 MiB buffers in `arena` and frees them, in allocation order.
    static func allocateAndFree(_ count: Int, in arena: Arena) throws {
        var buffers = try (0..<count).map { _ in try Buffer(in: arena) }
        buffers.removeAll()
    }

    static func dirtyBytes(of arena: Arena) throws -> Int {
        try Jemalloc.advanceEpoch()
        return try arena.statistics().dirtyPages * MallctlKey.pageSize.read()
    }

    @Test func purgingOnSeveralThreadsReturnsTheDirtyPagesOfEveryArena() throws {
        let arenas = try (0..<5).map { _ in try Self.arenaKeepingDirtyPages() }
        // Another suite's memory system may purge every arena of the process at any time (its
        // ladder's purge step does; under ThreadSanitizer one did between the frees and the check
        // here): the dirty pages are made again until every arena holds them at once.
        var allDirty = false
        for _ in 0..<5 where !allDirty {
            for arena in arenas { try Self.allocateAndFree(6, in: arena) }
            allDirty = try arenas.allSatisfy { try Self.dirtyBytes(of: $0) >= 6 * Self.mebibyte }
        }
        try #require(allDirty, "each arena holds 6 MiB of dirty pages before the purge")

        try Jemalloc.purgeAllArenas(threads: 2)

        for arena in arenas { #expect(try Self.dirtyBytes(of: arena) == 0) }
    }

    @Test func purgingSkipsDestroyedArenas() throws {
        let destroyed = try Arena.create()
        try destroyed.destroy()
        let kept = try Self.arenaKeepingDirtyPages()
        try Self.allocateAndFree(4, in: kept)

        try Jemalloc.purgeAllArenas(threads: 3)

        #expect(try Self.dirtyBytes(of: kept) == 0)
    }

    @Test func aThreadCountBelowOneOrAboveTheArenasStillPurges() throws {
        for threads in [0, -4, 10_000] {
            let arena = try Self.arenaKeepingDirtyPages()
            try Self.allocateAndFree(2, in: arena)
            try Jemalloc.purgeAllArenas(threads: threads)
            #expect(try Self.dirtyBytes(of: arena) == 0, "threads: \(threads)")
        }
    }

    /// An arena whose next buffers are adjacent: a new arena maps its memory in growing regions that
    /// do not coalesce with each other, so this maps one region of 32 MiB and gives it back first.
    static func arenaWithOneRegion() throws -> Arena {
        let arena = try Arena.create()
        do { _ = try arena.allocate(byteCount: 32 * mebibyte) }
        try arena.purge()
        return arena
    }

    /// Twelve adjacent 1 MiB extents freed in order coalesce past the 8 MiB threshold: outside a
    /// deferral the run is purged as it is freed, inside one it stays dirty for the caller's purge.
    @Test func freesInsideADeferralLeaveCoalescedRunsForThePurge() throws {
        let eager = try Self.arenaWithOneRegion()
        try Self.allocateAndFree(12, in: eager)
        #expect(try Self.dirtyBytes(of: eager) < 8 * Self.mebibyte, "eager purging is jemalloc's default")

        let deferred = try Self.arenaWithOneRegion()
        try Jemalloc.deferringEagerPurges { () throws in try Self.allocateAndFree(12, in: deferred) }
        #expect(try Self.dirtyBytes(of: deferred) >= 12 * Self.mebibyte)

        try Jemalloc.purgeAllArenas(threads: 2)
        #expect(try Self.dirtyBytes(of: deferred) == 0)
    }

    @Test func theThresholdComesBackWhenTheLastOfOverlappingDeferralsEnds() throws {
        let arena = try Arena.create()
        let threshold = MallctlKey<Int>("arena.\(arena.index).oversize_threshold")
        let standard = try MallctlKey.oversizeThreshold.read()
        #expect(try threshold.read() == standard)

        try Jemalloc.deferringEagerPurges { () throws in
            try Jemalloc.deferringEagerPurges { () throws in #expect(try threshold.read() == Int.max) }
            #expect(try threshold.read() == Int.max, "the outer deferral is still under way")
        }

        #expect(try threshold.read() == standard)
    }

    /// jemalloc writes an arena's threshold, and purges it, without the lock its destruction takes:
    /// both must wait for a destruction under way, or the process dies inside jemalloc. A crash here
    /// ends the whole test run.
    @Test func deferringAndPurgingWhileArenasAreDestroyedNeverCrashes() throws {
        let stop = Atomic<Bool>(false)
        let rounds = Atomic<Int>(0)
        let workers = DispatchGroup()
        DispatchQueue.global().async(group: workers) {
            while !stop.load(ordering: .relaxed) {
                Jemalloc.deferringEagerPurges { () -> Void in try? Jemalloc.purgeAllArenas(threads: 2) }
                rounds.add(1, ordering: .relaxed)
            }
        }
        defer {
            stop.store(true, ordering: .relaxed)
            workers.wait()
        }
        // A third of the all-arenas purge's rounds: each here also writes every arena's threshold
        // twice and purges every arena, so a round costs about three of those.
        for _ in 0..<ArenaMaintenanceTests.rounds / 3 {
            let arena = try Arena.create()
            try Self.allocateAndFree(1, in: arena)
            try arena.destroy()
        }
        #expect(rounds.load(ordering: .relaxed) > 0)
    }
}
