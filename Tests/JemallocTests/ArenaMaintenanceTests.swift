import Dispatch
import Jemalloc
import MemoryTestSupport
import Synchronization
import Testing

/// Purging every arena while other threads destroy arenas: jemalloc 5.3 frees a destroyed arena
/// under a concurrent all-arenas purge, which killed the process with SIGSEGV before every arena
/// command went through one owner. A crash here ends the whole test run.
@Suite(.serialized, .exclusiveMemoryUse)
struct ArenaMaintenanceTests {
    /// Rounds of create, allocate, touch, free and destroy; a full run takes a few seconds.
    static let rounds = Sanitizers.areActive ? 300 : 3_000

    @Test func purgingAllArenasWhileDestroyingArenasNeverCrashes() throws {
        let stop = Atomic<Bool>(false)
        let purges = Atomic<Int>(0)
        let purgers = DispatchGroup()
        for _ in 0..<2 {
            DispatchQueue.global().async(group: purgers) {
                while !stop.load(ordering: .relaxed) {
                    try? Jemalloc.purgeAllArenas()
                    purges.add(1, ordering: .relaxed)
                }
            }
        }
        defer {
            stop.store(true, ordering: .relaxed)
            purgers.wait()
        }
        for _ in 0..<Self.rounds {
            let arena = try Arena.create()
            do {
                var allocation = try arena.allocate(byteCount: 256 << 10)
                allocation.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0x5A) }
            }
            try arena.purge()
            try arena.destroy()
        }
        #expect(purges.load(ordering: .relaxed) > 0)
    }
}
