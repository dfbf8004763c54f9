import Jemalloc
import MemoryTestSupport
import Testing

/// Tests against the real allocator. They read process-wide statistics, so they run one at a time.
@Suite(.serialized, .exclusiveMemoryUse)
struct ArenaTests {
    static let mebibyte = 1 << 20

    /// Allocates `byteCount` in `arena` and writes every page, so the pages are really resident.
    static func touchedAllocation(_ byteCount: Int, in arena: Arena) throws -> ArenaAllocation {
        var allocation = try arena.allocate(byteCount: byteCount)
        allocation.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0xA5) }
        return allocation
    }

    @Test func allocationIsCountedToItsOwnArenaOnly() throws {
        let target = try Arena.create()
        let bystander = try Arena.create()
        let automatic = Arena(index: 0)
        try Jemalloc.advanceEpoch()
        let targetBefore = try target.statistics().allocated
        let bystanderBefore = try bystander.statistics().allocated
        let automaticBefore = try automatic.statistics().allocated

        let allocation = try Self.touchedAllocation(64 * Self.mebibyte, in: target)
        try Jemalloc.advanceEpoch()

        #expect(try target.statistics().allocated - targetBefore >= 64 * Self.mebibyte)
        #expect(try bystander.statistics().allocated == bystanderBefore)
        #expect(try automatic.statistics().allocated - automaticBefore < 64 * Self.mebibyte)
        #expect(allocation.arena == target)
        #expect(allocation.byteCount == 64 * Self.mebibyte)
    }

    @Test func freeingAndPurgingLowersResidentBytes() throws {
        let arena = try Arena.create()
        let residentWithBuffer: Int
        do {
            let allocation = try Self.touchedAllocation(64 * Self.mebibyte, in: arena)
            residentWithBuffer = try JemallocStatistics.current().resident
            // Used after the reading, so the buffer is certainly alive when it is taken.
            #expect(allocation.byteCount == 64 * Self.mebibyte)
        }
        try arena.purge()
        let residentAfterPurge = try JemallocStatistics.current().resident

        #expect(residentWithBuffer - residentAfterPurge >= 48 * Self.mebibyte)
        try Jemalloc.advanceEpoch()
        #expect(try arena.statistics().allocated == 0)
        #expect(try arena.statistics().dirtyPages == 0)
    }

    @Test func freedBytesStayDirtyUntilPurged() throws {
        let arena = try Arena.create()
        try MallctlKey<Int>("arena.\(arena.index).dirty_decay_ms").write(-1)
        _ = try Self.touchedAllocation(16 * Self.mebibyte, in: arena)
        try Jemalloc.advanceEpoch()
        let pageSize = try MallctlKey.pageSize.read()
        #expect(try arena.statistics().dirtyPages * pageSize >= 16 * Self.mebibyte)

        try arena.purge()
        try Jemalloc.advanceEpoch()
        #expect(try arena.statistics().dirtyPages == 0)
    }

    @Test func destroyedArenaIsReportedDestroyed() throws {
        let arena = try Arena.create()
        do {
            _ = try Self.touchedAllocation(4 * Self.mebibyte, in: arena)
        }
        #expect(try arena.isInitialized)
        try arena.destroy()
        #expect(try arena.isInitialized == false)
    }

    @Test func automaticArenasCannotBeDestroyed() throws {
        #expect {
            try Arena(index: 0).destroy()
        } throws: { error in
            (error as? JemallocError)?.key == "arena.0.destroy"
        }
        #expect(try Arena(index: 0).isInitialized)
    }

    @Test func aNewArenaHasStatisticsAtOnce() throws {
        let arena = try Arena.create()
        let statistics = try arena.statistics()
        #expect(statistics.allocated == 0)
        #expect(statistics.activePages == 0)
    }

    @Test func invalidAllocationRequestsAreErrors() throws {
        let arena = try Arena.create()
        for (byteCount, alignment) in [(0, 16), (-1, 16), (64, 3), (64, 0)] {
            #expect(throws: JemallocError.self) {
                _ = try arena.allocate(byteCount: byteCount, alignment: alignment)
            }
        }
    }

    @Test func alignedAndZeroedAllocations() throws {
        let arena = try Arena.create()
        let allocation = try arena.allocate(byteCount: 10_000, alignment: 4096, zeroed: true)
        allocation.withUnsafeBytes { bytes in
            #expect(Int(bitPattern: bytes.baseAddress) % 4096 == 0)
            #expect(bytes.count == 10_000)
            #expect(bytes.allSatisfy { $0 == 0 })
        }
    }
}
