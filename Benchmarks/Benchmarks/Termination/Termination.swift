import Benchmark
import BenchmarkSupport
import MemoryPressureTestKit

/// How long terminating a suspended app of 256 MiB takes until its pages are back: from
/// `App.terminate(reason:)` until the system's termination record (sent once the app's run loop has
/// let go of its delegate, which held the ballast, and its heap's arena was destroyed) and a statm
/// reading that shows the process's resident bytes fell by the app's bytes.
///
/// Beside it, in each iteration, the kernel's own reclaim time for the same bytes
/// (`madvise(MADV_DONTNEED)` of touched pages) and the ratio to it.
let terminationTime = BenchmarkMetric.custom("termination time (ns)", polarity: .prefersSmaller, useScalingFactor: false)

let appBytes = 256 * mebibyte

let benchmarks: @Sendable () -> Void = {
    let configuration = RunMode.current.configuration(
        timed: [terminationTime, ratioToKernel], warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 10
    )
    Benchmark("Terminate-suspended-app-256MiB", configuration: configuration) { benchmark in
        let terminated = try await SuspendedAppTermination.nanosecondsToTerminate(appBytes: appBytes)
        let kernel = try KernelReclaim.timeToReclaim(bytes: appBytes).wholeNanoseconds
        benchmark.measurement(terminationTime, terminated)
        benchmark.measurement(ratioToKernel, terminated * 100 / kernel)
    }
}
