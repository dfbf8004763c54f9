import Glibc
import Jemalloc

/// Live heap bytes and allocation requests as jemalloc counts them, for footprint and allocation
/// metrics.
///
/// Counted from jemalloc's own statistics, which an epoch refresh merges from every thread's
/// cache. When the benchmark tool's malloc interposer serves malloc (the plugin preloads it), each
/// block it hands out carries its 16-byte header, which a service without the interposer does not
/// pay; ``bytes`` leaves those headers out, so footprints read as they would in production.
public struct HeapUsage: Sendable {
    /// Bytes allocated and not freed (including bytes parked in thread caches), less the
    /// interposer's headers when it serves malloc.
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
        let liveAllocations = read("small.nmalloc") - read("small.ndalloc") + read("large.nmalloc") - read("large.ndalloc")
        return HeapUsage(
            bytes: try! MallctlKey.statsAllocated.read() - liveAllocations * interposerHeaderBytes,
            liveAllocations: liveAllocations,
            requests: read("small.nrequests") + read("large.nrequests")
        )
    }

    /// The bytes the malloc interposer puts before each block it hands out from malloc, calloc and
    /// realloc (`malloc_header_t`, 16 bytes in malloc-interposer 1.6), when the benchmark plugin
    /// has preloaded it; 0 otherwise. Two things this does not undo: aligned allocations carry no
    /// header (a footprint of many would read low by 16 bytes each), and a header that moves a
    /// block into a larger size class above 112 bytes costs more than 16.
    static let interposerHeaderBytes: Int = {
        guard let preloaded = getenv("LD_PRELOAD"), String(cString: preloaded).contains("libMallocInterposerSwift.so") else {
            return 0
        }
        return 16
    }()

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
