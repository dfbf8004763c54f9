import Benchmark
import Logging
import MemoryPressure
import MemoryPressureTestKit

/// The ratio of a figure to its limit, in percent (a benchmark metric holds whole numbers):
/// 150 is 1.5x.
public let ratioToKernel = BenchmarkMetric.custom(
    "ratio to kernel madvise (%)", polarity: .prefersSmaller, useScalingFactor: false
)

extension MemorySystem.Configuration {
    /// The test kit's system on the process's real footprint (`test(targetBytes:thresholds:archiveIn:logger:)`:
    /// sampled every 20 ms, no settle time, no stall input) with the standard thresholds, so that
    /// the target (70 %) is `targetBytes`; logging only warnings and errors.
    public static func benchmark(targetBytes: Int) throws -> Self {
        var logger = Logger(label: "benchmark")
        logger.logLevel = .warning
        return try .test(targetBytes: targetBytes, thresholds: .standard, logger: logger)
    }
}

extension MemorySystem.Configuration {
    /// The defaults a service gets from `MemorySystem.Configuration(budget:)`, nothing tuned: a budget
    /// of `budgetBytes` with the standard thresholds (warning at 80 %, critical at 95 %, the target at
    /// 70 %), the monitor's 250 ms interval and 10 ms fast interval, its 5 s settle time, the stall
    /// input and the PSI trigger; only the loggers are quieter (warnings and errors).
    public static func defaults(budgetBytes: Int) throws -> Self {
        var logger = Logger(label: "benchmark")
        logger.logLevel = .warning
        return MemorySystem.Configuration(budget: try MemoryBudget(totalBytes: budgetBytes), logger: logger)
    }
}

/// A benchmark run that did not measure what the benchmark is about.
public struct BenchmarkFailure: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
