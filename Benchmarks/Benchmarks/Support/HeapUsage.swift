import Jemalloc

/// Live heap bytes and allocation requests as jemalloc counts them, for footprint and allocation
/// metrics.
///
/// The suites run without the benchmark tool's malloc interposer (its per-allocation header
/// would inflate every footprint), so allocations are counted here from jemalloc's own
/// statistics, which an epoch refresh merges from every thread's cache.
public struct HeapUsage: Sendable {
    /// Bytes allocated and not freed (including bytes parked in thread caches).
    public var bytes: Int
    /// Allocations not freed.
    public var liveAllocations: Int
    /// Allocation requests made so far, including those a thread cache served.
    public var requests: Int

    /// The process's figures now, after flushing the calling thread's cache so that bytes it freed
    /// do not count as allocated.
    public static func now() -> HeapUsage {
        try! Jemalloc.flushThreadCache()
        try! Jemalloc.advanceEpoch()
        func read(_ name: String) -> Int { Int(try! MallctlKey<UInt64>("stats.arenas.4096.\(name)").read()) }
        return HeapUsage(
            bytes: try! MallctlKey.statsAllocated.read(),
            liveAllocations: read("small.nmalloc") - read("small.ndalloc") + read("large.nmalloc") - read("large.ndalloc"),
            requests: read("small.nrequests") + read("large.nrequests")
        )
    }

    /// Runs `build` and returns what it built with the heap it still holds once built.
    public static func measureGrowth<Built>(_ build: () throws -> Built) rethrows -> (built: Built, growth: HeapUsage) {
        let before = now()
        let built = try build()
        let after = now()
        return (built, HeapUsage(
            bytes: after.bytes - before.bytes,
            liveAllocations: after.liveAllocations - before.liveAllocations,
            requests: after.requests - before.requests
        ))
    }

    /// The allocation requests `operation` makes per run, over `runs` runs.
    public static func allocationsPerRun(_ runs: Int, _ operation: () throws -> Void) rethrows -> Int {
        let before = now().requests
        for _ in 0..<runs { try operation() }
        return (now().requests - before) / runs
    }
}
