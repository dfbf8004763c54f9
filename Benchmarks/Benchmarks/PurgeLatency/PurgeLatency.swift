import Benchmark
import BenchmarkSupport
import Jemalloc
import MemoryPressure

#if canImport(Glibc)
import Glibc
#endif

/// How long it takes to give 256 MiB and 1 GiB of touched memory back to the operating system.
///
/// Beside the manager's own figure sit its limits, measured in the same run:
/// - the kernel's own reclaim time for the bytes: `madvise(MADV_DONTNEED)` of touched anonymous
///   pages, the floor no allocator can beat;
/// - jemalloc's: the same bytes as 1 MiB cache payloads spread over ten per-app arenas, freed, then
///   each arena purged. (glibc's free + malloc_trim cannot be measured here: jemalloc is the
///   process's malloc.)
///
/// Each figure is a custom metric in nanoseconds; BENCHMARKS.md gives their ratios.
let reclaimTime = BenchmarkMetric.custom("reclaim time (ns)", polarity: .prefersSmaller, useScalingFactor: false)

let mebibyte = 1 << 20
let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
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

/// Writes one byte in every page, so every page is resident.
func touchEveryPage(_ bytes: UnsafeMutableRawBufferPointer) {
    for offset in stride(from: 0, to: bytes.count, by: pageSize) {
        bytes[offset] = 1
    }
}

/// Nanoseconds `work` takes.
func nanoseconds(_ work: () throws -> Void) rethrows -> Int {
    let clock = ContinuousClock()
    let elapsed = try clock.measure(work)
    return Int(elapsed / .nanoseconds(1))
}

let benchmarks: @Sendable () -> Void = {
    let configuration = RunMode.current.configuration(
        timed: [reclaimTime], warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 10
    )
    // The apps' arenas, made once: arenas are never given back to jemalloc.
    let arenas = Result { try (0..<appCount).map { _ in try Arena.create() } }

    for (label, byteCount) in [("256MiB", 256 * mebibyte), ("1GiB", 1024 * mebibyte)] {
        Benchmark("Purge-\(label):kernel-madvise-DONTNEED", configuration: configuration) { benchmark in
            guard let region = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                  region != MAP_FAILED
            else { throw SystemCallError(name: "mmap", errno: errno) }
            defer { munmap(region, byteCount) }
            touchEveryPage(UnsafeMutableRawBufferPointer(start: region, count: byteCount))
            benchmark.measurement(reclaimTime, nanoseconds {
                precondition(madvise(region, byteCount, MADV_DONTNEED) == 0, "madvise failed: \(errno)")
            })
        }

        Benchmark("Purge-\(label):jemalloc-free-and-purge-10-arenas", configuration: configuration) { benchmark in
            let arenas = try arenas.get()
            var payloads = try (0..<byteCount / payloadBytes).map { index in try Payload(in: arenas[index % appCount]) }
            benchmark.measurement(reclaimTime, try nanoseconds {
                payloads.removeAll()
                for arena in arenas { try arena.purge() }
            })
        }

        // The ladder's own figure joins these two once MemorySystem lands, as
        // "Purge-\(label):ladder": the same bytes as cache payloads of ten apps, timed from the
        // sample that crosses the critical threshold until a sample shows the footprint back under
        // the target, recorded in `reclaimTime` so that its ratio to the kernel's figure comes from
        // the same run.
    }
}

/// A system call that failed.
struct SystemCallError: Error {
    let name: String
    let errno: Int32
}
