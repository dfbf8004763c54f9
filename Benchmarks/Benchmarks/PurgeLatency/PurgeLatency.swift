import Benchmark
import BenchmarkSupport
import Jemalloc
import MemoryPressureTestKit

/// How long it takes to give 256 MiB and 1 GiB of touched memory back to the operating system.
///
/// The manager's own figure (`Purge-…:ladder`, see ``LadderPurge``): the bytes as cache payloads of
/// ten apps, at the default configuration, from the app-heap allocation that crosses the warning
/// threshold until the footprint is back under target. Beside it sit its limits, measured in the
/// same run:
/// - the kernel's own reclaim time for the bytes: `madvise(MADV_DONTNEED)` of touched anonymous
///   pages, the floor no allocator can beat (the ladder's benchmark also measures it in each of its
///   own iterations and records its ratio to it);
/// - jemalloc's: the same bytes as 1 MiB cache payloads spread over ten per-app arenas, freed, then
///   each arena purged. (glibc's free + malloc_trim cannot be measured here: jemalloc is the
///   process's malloc.)
///
/// Each figure is a custom metric in nanoseconds; BENCHMARKS.md gives their ratios.
let reclaimTime = BenchmarkMetric.custom("reclaim time (ns)", polarity: .prefersSmaller, useScalingFactor: false)

let payloadBytes = mebibyte
let appCount = 10

/// One cache payload: a buffer in its app's arena.
final class Payload {
    var allocation: ArenaAllocation

    init(in arena: Arena) throws(JemallocError) {
        allocation = try arena.allocate(byteCount: payloadBytes)
        allocation.withUnsafeMutableBytes(touchEveryPage)
    }
}

let benchmarks: @Sendable () -> Void = {
    let configuration = RunMode.current.configuration(
        timed: [reclaimTime], warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 10
    )
    let ladderConfiguration = RunMode.current.configuration(
        timed: [reclaimTime, ratioToKernel], warmupIterations: 1, maxDuration: .seconds(40), maxIterations: 10
    )
    // The apps' arenas, made once: arenas are never given back to jemalloc.
    let arenas = Result { try (0..<appCount).map { _ in try Arena.create() } }

    for (label, byteCount) in [("256MiB", 256 * mebibyte), ("1GiB", 1024 * mebibyte)] {
        Benchmark("Purge-\(label):kernel-madvise-DONTNEED", configuration: configuration) { benchmark in
            benchmark.measurement(reclaimTime, try KernelReclaim.timeToReclaim(bytes: byteCount).wholeNanoseconds)
        }

        Benchmark("Purge-\(label):jemalloc-free-and-purge-10-arenas", configuration: configuration) { benchmark in
            let arenas = try arenas.get()
            var payloads = try (0..<byteCount / payloadBytes).map { index in try Payload(in: arenas[index % appCount]) }
            benchmark.measurement(reclaimTime, try nanoseconds {
                payloads.removeAll()
                for arena in arenas { try arena.purge() }
            })
        }

        Benchmark("Purge-\(label):ladder", configuration: ladderConfiguration) { benchmark in
            let purge = try await LadderPurge.purge(cachedBytes: byteCount, appCount: appCount)
            let kernel = try KernelReclaim.timeToReclaim(bytes: purge.purgedBytes).wholeNanoseconds
            benchmark.measurement(reclaimTime, purge.latency)
            benchmark.measurement(ratioToKernel, purge.latency * 100 / kernel)
        }
    }
}
