#if canImport(Glibc)
import Glibc
#endif
import Benchmark
import BenchmarkSupport
@_spi(Benchmarks) import MemoryPressure
import MemoryPressureTestKit

// Ten thousand tenants (issue 17): what one app costs as their number grows, at N = 100, 1,000,
// 10,000 and (where it fits) 100,000. Each figure is per app or per operation, so a flat cost reads
// the same at every N. Every app has a heap.

let launchPerApp = BenchmarkMetric.custom("launch per app (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let fullSample = BenchmarkMetric.custom("full sample (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let residentPerApp = BenchmarkMetric.custom("resident bytes per app", polarity: .prefersSmaller, useScalingFactor: false)
let residentLeftPerApp = BenchmarkMetric.custom(
    "resident bytes left per terminated app", polarity: .prefersSmaller, useScalingFactor: false
)
let warningTime = BenchmarkMetric.custom("warning to every app (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let peakThreads = BenchmarkMetric.custom("threads at peak", polarity: .prefersSmaller, useScalingFactor: false)
let systemDelivery = BenchmarkMetric.custom("system's warning delivery (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let sampleToRecord = BenchmarkMetric.custom(
    "footprint raised to delivery recorded (ns)", polarity: .prefersSmaller, useScalingFactor: false
)
let perTermination = BenchmarkMetric.custom("per termination (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let middleToFirstTenth = BenchmarkMetric.custom("middle tenth to first (%)", polarity: .prefersSmaller, useScalingFactor: false)
let lastToFirstTenth = BenchmarkMetric.custom("last tenth to first (%)", polarity: .prefersSmaller, useScalingFactor: false)
// Counts that do not depend on the machine's speed: what the short mode of CI checks.
let appsReached = BenchmarkMetric.custom("apps reached", polarity: .prefersLarger, useScalingFactor: false)
let appsTerminated = BenchmarkMetric.custom("apps terminated", polarity: .prefersLarger, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    for count in Tenants.counts(upTo: 100_000) {
        // Register and launch each app (its delegate makes its heap and one 4 KiB buffer), then,
        // with every app alive: one full sample, and the resident bytes per app; then every app
        // terminated (`shutDown`) and the resident bytes left per app.
        Benchmark(
            "Scale-tenants:\(count)",
            configuration: RunMode.current.configuration(
                timed: [launchPerApp, fullSample, residentPerApp, residentLeftPerApp], counted: [appsTerminated],
                warmupIterations: count >= 10_000 ? 0 : 1, maxDuration: .seconds(60), maxIterations: count >= 100_000 ? 2 : 3
            )
        ) { benchmark in
            let figures = try await TenantFigures.measure(count)
            benchmark.measurement(launchPerApp, figures.launchPerApp)
            benchmark.measurement(fullSample, figures.fullSample)
            benchmark.measurement(residentPerApp, figures.residentPerApp)
            benchmark.measurement(residentLeftPerApp, figures.residentLeftPerApp)
            benchmark.measurement(appsTerminated, figures.terminated)
        }

        // One memory warning to every app, all active, until each has handled it; the process's
        // threads counted every millisecond meanwhile.
        Benchmark(
            "Scale-warning:\(count)",
            configuration: RunMode.current.configuration(
                timed: [warningTime, peakThreads], counted: [appsReached],
                maxDuration: .seconds(60), maxIterations: count >= 100_000 ? 2 : 5
            )
        ) { benchmark in
            let figures = try await WarningFigures.measure(count)
            benchmark.measurement(warningTime, figures.nanoseconds)
            benchmark.measurement(peakThreads, figures.peakThreads)
            benchmark.measurement(appsReached, figures.reached)
        }
    }

    for count in Tenants.counts() {
        // Through the public API only (issue 26): every app takes its heap and one 1 MiB buffer in
        // it at launch; every app terminated (`shutDown`), its buffer let go and the records
        // dropped; the resident bytes left per app, the system still alive. One measured iteration
        // per process (see `LeftBehindFigures`): run the executable several times for percentiles.
        Benchmark(
            "Scale-left-behind:\(count)",
            configuration: RunMode.current.configuration(
                timed: [residentLeftPerApp], counted: [appsTerminated],
                warmupIterations: 0, maxDuration: .seconds(120), maxIterations: 1
            )
        ) { benchmark in
            let figures = try await LeftBehindFigures.measure(count)
            benchmark.measurement(residentLeftPerApp, figures.residentLeftPerApp)
            benchmark.measurement(appsTerminated, figures.terminated)
        }

        // One memory warning to every app through the running system, as a service gets it (issue
        // 26): the system's own delivery time, from the raised footprint to the recorded delivery,
        // and the threads at peak.
        Benchmark(
            "Scale-warning-through-the-system:\(count)",
            configuration: RunMode.current.configuration(
                timed: [systemDelivery, sampleToRecord, peakThreads], counted: [appsReached],
                maxDuration: .seconds(60), maxIterations: count >= 100_000 ? 2 : 7
            )
        ) { benchmark in
            let figures = try await SystemWarningFigures.measure(count)
            benchmark.measurement(systemDelivery, figures.deliveryNanoseconds)
            benchmark.measurement(sampleToRecord, figures.sampleToRecordNanoseconds)
            benchmark.measurement(peakThreads, figures.peakThreads)
            benchmark.measurement(appsReached, figures.reached)
        }

        // Every app suspended with 1 MiB resident in its heap; the ladder, at critical pressure
        // with a target it cannot reach, terminates them all, largest first, one at a time.
        Benchmark(
            "Scale-ladder:\(count)",
            configuration: RunMode.current.configuration(
                timed: [perTermination, middleToFirstTenth, lastToFirstTenth], counted: [appsTerminated],
                warmupIterations: count >= 10_000 ? 0 : 1, maxDuration: .seconds(60), maxIterations: 3
            )
        ) { benchmark in
            let figures = try await LadderFigures.measure(count)
            benchmark.measurement(perTermination, figures.perTermination)
            benchmark.measurement(middleToFirstTenth, figures.middleToFirst)
            benchmark.measurement(lastToFirstTenth, figures.lastToFirst)
            benchmark.measurement(appsTerminated, figures.terminated)
        }
    }

    processAppBenchmarks()
}
