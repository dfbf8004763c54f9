import Benchmark

#if canImport(Glibc)
import Glibc
#endif

/// How long the suites run: full runs, whose figures BENCHMARKS.md quotes, or the short runs CI
/// makes (`MEMPRESSURE_BENCHMARKS=short`) only to keep every suite building and running.
///
/// A short run makes at most two measured iterations and records only the metrics that do not
/// depend on the machine's speed (allocation counts, bytes), so a threshold check in CI judges no
/// absolute time.
public enum RunMode: Sendable {
    case full
    case short

    /// The mode the environment asks for.
    public static let current: RunMode = getenv("MEMPRESSURE_BENCHMARKS").map { String(cString: $0) } == "short" ? .short : .full

    /// A configuration recording `timed` metrics (left out of short runs) and `counted` ones, with
    /// the tolerances a threshold check allows each kind (see ``Tolerance``).
    public func configuration(
        timed: [BenchmarkMetric] = [.wallClock, .throughput],
        counted: [BenchmarkMetric] = [],
        timeUnits: BenchmarkTimeUnits = .automatic,
        scalingFactor: BenchmarkScalingFactor = .one,
        warmupIterations: Int = 1,
        maxDuration: Duration = .seconds(2),
        maxIterations: Int
    ) -> Benchmark.Configuration {
        let recordedTimed = self == .short ? [] : timed
        var thresholds: [BenchmarkMetric: BenchmarkThresholds] = [:]
        for metric in recordedTimed { thresholds[metric] = Tolerance.timed }
        for metric in counted { thresholds[metric] = Tolerance.counted }
        return Benchmark.Configuration(
            metrics: recordedTimed + counted,
            timeUnits: timeUnits,
            warmupIterations: self == .short ? min(warmupIterations, 1) : warmupIterations,
            scalingFactor: scalingFactor,
            maxDuration: self == .short ? min(maxDuration, .seconds(1)) : maxDuration,
            maxIterations: self == .short ? min(maxIterations, 2) : maxIterations,
            thresholds: thresholds
        )
    }
}

/// How far a metric's 90th percentile may move from its recorded threshold
/// (`Benchmarks/Thresholds/*.p90.json`) before `swift package benchmark thresholds check` fails.
public enum Tolerance {
    /// Times and rates: this machine is shared and noisy, so only a regression of more than half
    /// fails.
    public static var timed: BenchmarkThresholds { BenchmarkThresholds(relative: [.p90: 50]) }
    /// Counts and bytes are the same from run to run: a change of more than 5 % fails.
    public static var counted: BenchmarkThresholds { BenchmarkThresholds(relative: [.p90: 5]) }
}

/// Heap allocation requests per operation, counted by jemalloc (see ``HeapUsage``).
public let allocationsPerOperation = BenchmarkMetric.custom("allocations per operation", useScalingFactor: false)
