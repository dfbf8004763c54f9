#if canImport(Glibc)
import Glibc
#endif
import Benchmark
import BenchmarkSupport
import MemoryPressure

/// The cost of a small allocation in an app's heap (issue 17: at most 4x `malloc`), admission
/// against the budget and exact counting included: a heap of a memory system, 256 bytes allocated
/// and freed on one thread, against `malloc` and `free` in the same run.
///
/// The plugin preloads the benchmark tool's malloc interposer, which slows `malloc` itself (and the
/// `HeapBuffer` object); `allocateBytes` goes to jemalloc's `mallocx` directly. BENCHMARKS.md keeps
/// the figures of a plain process beside these.
let heapToMallocRatio = BenchmarkMetric.custom("heap to malloc time (percent)", polarity: .prefersSmaller, useScalingFactor: false)

let byteCount = 256

/// A Swift object and nothing more: what allocating any class instance costs, `HeapBuffer` included.
final class PlainObject {
    let value: Int
    init(_ value: Int) {
        self.value = value
    }
}
/// Pairs per timed half of the ratio benchmark: about 15 ms of heap allocations, so that a
/// preemption moves the ratio little.
let pairsPerHalf = 1_000_000

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = RunMode.current.configuration(
        counted: [allocationsPerOperation], scalingFactor: .kilo, maxIterations: 100_000
    )
    let system = try! MemorySystem(configuration: .init(budget: try! MemoryBudget(totalBytes: 4 << 30)))
    let heap = try! system.heap(for: try! AppIdentifier("heaps-benchmark"))

    func mallocPair() {
        let bytes = malloc(byteCount)
        blackHole(bytes)
        free(bytes)
    }
    // Typed throws and direct calls (no closure values), so that the heap loops pay no call
    // through a closure and no reabstraction thunk that the malloc loop does not.
    func heapPair() throws(MemoryPressureError) {
        let bytes = try heap.allocateBytes(byteCount: byteCount)
        blackHole(bytes.baseAddress)
        heap.deallocate(bytes)
    }
    func bufferPair() throws(MemoryPressureError) {
        blackHole(try heap.allocate(byteCount: byteCount))
    }
    func objectPair() {
        blackHole(PlainObject(byteCount))
    }

    Benchmark("Heap-256-allocate-free:malloc") { benchmark in
        for _ in benchmark.scaledIterations { mallocPair() }
        benchmark.stopMeasurement()
        benchmark.measurement(allocationsPerOperation, HeapUsage.allocationsPerRun(1000, mallocPair))
    }

    // jemalloc requests per pair: none in the steady state, since the thread keeps a few objects
    // of each small size in front of its cache.
    Benchmark("Heap-256-allocate-free:allocateBytes") { benchmark in
        for _ in benchmark.scaledIterations { try heapPair() }
        benchmark.stopMeasurement()
        benchmark.measurement(allocationsPerOperation, try HeapUsage.allocationsPerRun(1000, heapPair))
    }

    Benchmark("Heap-256-allocate-free:HeapBuffer") { benchmark in
        for _ in benchmark.scaledIterations { try bufferPair() }
        benchmark.stopMeasurement()
        benchmark.measurement(allocationsPerOperation, try HeapUsage.allocationsPerRun(1000, bufferPair))
    }

    // The goal's figures: each heap loop and a malloc loop timed back to back in each iteration, as
    // a percentage: the raw path, and the `HeapBuffer` that services and the docs use (issue 26).
    let ratioConfiguration = RunMode.current.configuration(timed: [heapToMallocRatio], maxDuration: .seconds(5), maxIterations: 20)
    Benchmark("Heap-256-allocate-free:ratio-to-malloc", configuration: ratioConfiguration) { benchmark in
        let mallocTime = nanoseconds { for _ in 0..<pairsPerHalf { mallocPair() } }
        let heapTime = try nanoseconds { for _ in 0..<pairsPerHalf { try heapPair() } }
        benchmark.measurement(heapToMallocRatio, heapTime * 100 / max(1, mallocTime))
    }
    Benchmark("Heap-256-allocate-free:HeapBuffer-ratio-to-malloc", configuration: ratioConfiguration) { benchmark in
        let mallocTime = nanoseconds { for _ in 0..<pairsPerHalf { mallocPair() } }
        let heapTime = try nanoseconds { for _ in 0..<pairsPerHalf { try bufferPair() } }
        benchmark.measurement(heapToMallocRatio, heapTime * 100 / max(1, mallocTime))
    }
    // The peer under any `HeapBuffer`, itself a Swift object: a plain Swift object allocated and
    // released, against malloc/free in the same way. On a machine where that alone costs more than
    // the HeapBuffer threshold (7.6 to 8x malloc on a KVM AMD EPYC, 2026-11-28), tools/ci-ratios
    // judges the HeapBuffer against it.
    Benchmark("Heap-256-allocate-free:object-ratio-to-malloc", configuration: ratioConfiguration) { benchmark in
        let mallocTime = nanoseconds { for _ in 0..<pairsPerHalf { mallocPair() } }
        let objectTime = nanoseconds { for _ in 0..<pairsPerHalf { objectPair() } }
        benchmark.measurement(heapToMallocRatio, objectTime * 100 / max(1, mallocTime))
    }
}
