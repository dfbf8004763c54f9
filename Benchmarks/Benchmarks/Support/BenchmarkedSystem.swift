import Benchmark
import Jemalloc
import Logging
import MemoryPressure

/// The ratio of a figure to its limit, in percent (a benchmark metric holds whole numbers):
/// 150 is 1.5x.
public let ratioToKernel = BenchmarkMetric.custom(
    "ratio to kernel madvise (%)", polarity: .prefersSmaller, useScalingFactor: false
)

extension MemorySystem.Configuration {
    /// A system judged on the process's real footprint (statm), against a budget whose target
    /// (its warning recovery, 70 % with the standard thresholds) is `targetBytes`; sampled every
    /// 20 ms, with no settle time and no stall input, logging only warnings and errors.
    public static func benchmark(targetBytes: Int) throws -> Self {
        let thresholds = MemoryBudget.Thresholds.standard
        let budget = try MemoryBudget(
            totalBytes: Int(Double(targetBytes) / thresholds.ratios.warningRecovery), thresholds: thresholds
        )
        var logger = Logger(label: "benchmark")
        logger.logLevel = .warning
        var configuration = MemorySystem.Configuration(budget: budget, logger: logger)
        configuration.monitor.interval = .milliseconds(20)
        configuration.monitor.settleTime = .zero
        configuration.monitor.stallThresholds = nil
        configuration.monitor.stallTrigger = nil
        return configuration
    }
}

extension MemorySystem {
    /// Runs the system until the ladder gets the footprint under target, and returns that run;
    /// nil when no run did within `limit`.
    public func firstRunUnderTarget(within limit: Duration = .seconds(30)) async throws -> LadderRun? {
        let events = events()
        return try await withThrowingTaskGroup(of: LadderRun?.self) { group in
            group.addTask {
                try await self.run()
                return nil
            }
            group.addTask {
                for await event in events {
                    if case .ladderRun(let run) = event, run.latency != nil { return run }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }
}

/// The process's resident bytes now (statm), after returning jemalloc's dirty pages so they do
/// not count.
public func settledResidentBytes() throws -> Int {
    try Jemalloc.purgeAllArenas()
    return try ProcessMemory.current().residentBytes
}
