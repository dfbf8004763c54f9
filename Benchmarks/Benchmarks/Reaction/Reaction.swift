import Benchmark
import BenchmarkSupport
import MemoryPressureTestKit

/// How soon the system reacts when the footprint crosses the critical threshold, at the default
/// configuration (see ``CriticalCrossing``): from the app-heap allocation that crossed it, or for
/// memory outside the heaps from the first sample over it, to the ladder's first action, to the
/// termination of a suspended app of 64 MiB, and to that app's pages being back. Each case also
/// runs while CPU-bound tasks keep every thread of the Swift cooperative pool busy.
///
/// Beside them, in each iteration, the kernel's own reclaim time for the app's bytes
/// (`madvise(MADV_DONTNEED)` of touched pages), which bounds the last figure from below; for an
/// app-heap crossing, the time to the sample that announced the critical level and the crossing
/// allocation's own call (it faults its pages in); outside the heaps, the time from the last page
/// written to the sample that found it. Times in microseconds.
let toFirstAction = BenchmarkMetric.custom("crossing to first action (us)", polarity: .prefersSmaller, useScalingFactor: false)
let toTermination = BenchmarkMetric.custom("crossing to termination (us)", polarity: .prefersSmaller, useScalingFactor: false)
let toPagesBack = BenchmarkMetric.custom("crossing to pages back (us)", polarity: .prefersSmaller, useScalingFactor: false)
let kernelReclaim = BenchmarkMetric.custom(
    "kernel madvise of the app's bytes (us)", polarity: .prefersSmaller, useScalingFactor: false
)
let detection = BenchmarkMetric.custom(
    "last page written to crossing sample (us)", polarity: .prefersSmaller, useScalingFactor: false
)
let wake = BenchmarkMetric.custom("allocation to critical sample (us)", polarity: .prefersSmaller, useScalingFactor: false)
let allocation = BenchmarkMetric.custom("crossing allocation call (us)", polarity: .prefersSmaller, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    for (kind, name) in [(CriticalCrossing.Kind.appHeap, "app-heap"), (.outsideHeaps, "outside-heaps")] {
        for saturatingPool in [false, true] {
            let metrics = [toFirstAction, toTermination, toPagesBack, kernelReclaim] + (kind == .outsideHeaps ? [detection] : [wake, allocation])
            let configuration = RunMode.current.configuration(
                timed: metrics, warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 20
            )
            Benchmark("Reaction-critical-\(name)\(saturatingPool ? "-saturated-pool" : "")", configuration: configuration) { benchmark in
                let reaction = try await CriticalCrossing.measure(kind, saturatingPool: saturatingPool)
                let kernel = try KernelReclaim.timeToReclaim(bytes: CriticalCrossing.victimBytes).wholeNanoseconds
                benchmark.measurement(toFirstAction, reaction.firstAction / 1000)
                benchmark.measurement(toTermination, reaction.termination / 1000)
                benchmark.measurement(toPagesBack, reaction.pagesBack / 1000)
                benchmark.measurement(kernelReclaim, kernel / 1000)
                if let detected = reaction.detection {
                    benchmark.measurement(detection, detected / 1000)
                }
                if let woken = reaction.wake, let allocated = reaction.allocation {
                    benchmark.measurement(wake, woken / 1000)
                    benchmark.measurement(allocation, allocated / 1000)
                }
            }
        }
    }
}
