import ArgumentParser
import Jemalloc
import Logging
@_spi(Benchmarks) import MemoryPressure

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `mempressure stats`: one reading of every figure the system decides on, or with `--watch` a
/// sample and its level every interval.
struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print jemalloc's statistics and configuration, the process's memory, the cgroup's limits and PSI.",
        discussion: "With --watch, print a sample and its pressure level against the budget every interval until interrupted."
    )

    @Flag(help: "Print JSON with exact byte counts instead of labelled text.")
    var json = false

    @Flag(help: "Print a sample and the pressure level every interval, until interrupted or --count samples.")
    var watch = false

    @Option(parsing: .unconditional, help: "Time between samples with --watch, such as 500ms, 2s or 1.5m; at least 1ms.")
    var interval = "1s"

    @Option(parsing: .unconditional, help: "Budget the level is judged against with --watch, such as 512MiB, 2GiB or 1.5G, or auto (the default): 90% of the cgroup's limit, else of physical memory, following the limit as it changes.")
    var budget: String?

    @Option(parsing: .unconditional, help: "Stop after this many samples with --watch.")
    var count: Int?

    @Option(parsing: .unconditional, help: "How often --watch reads the cgroup's limit again, such as 1s or 10s; the budget follows it (a line says so). Default 10s.")
    var limitInterval = "10s"

    /// The shortest interval between samples: below it the monitor would keep a core busy.
    static let minimumInterval = Duration.milliseconds(1)

    func validate() throws {
        if let count, count < 1 {
            throw ValidationError("--count \(count) is not positive; expected 1 or more samples")
        }
        _ = try samplingInterval()
        _ = try limitCheckInterval()
        if !watch, budget != nil || count != nil {
            throw ValidationError("--budget and --count apply only with --watch")
        }
        if watch, json {
            throw ValidationError("--json applies only without --watch")
        }
        _ = try watchBudget(limits: Self.limits)
    }

    /// `--interval`, checked to be a duration of at least ``minimumInterval``.
    private func samplingInterval() throws(ValidationError) -> Duration {
        try Self.duration(interval, option: "--interval")
    }

    /// `--limit-interval`, checked to be a duration of at least ``minimumInterval``.
    private func limitCheckInterval() throws(ValidationError) -> Duration {
        try Self.duration(limitInterval, option: "--limit-interval")
    }

    /// `text`, the value of `option`, checked to be a duration of at least ``minimumInterval``.
    private static func duration(_ text: String, option: String) throws(ValidationError) -> Duration {
        let expected = "expected a duration of at least 1ms, such as 500ms, 2s or 1.5m"
        if text.trimmingPrefix(while: \.isWhitespace).hasPrefix("-") {
            throw ValidationError("\(option) \(text.echoed()) is negative; \(expected)")
        }
        let duration: Duration
        do {
            duration = try DurationParser.parse(text)
        } catch {
            throw ValidationError("\(option) \(text.echoed()) is not a duration; \(expected)")
        }
        guard duration >= minimumInterval else {
            throw ValidationError("\(option) \(text.echoed()) is below the floor of 1ms; \(expected)")
        }
        return duration
    }

    /// `--budget` checked against `limits`, or the automatic budget; nil without `--watch`.
    private func watchBudget(limits: MemoryLimits) throws(ValidationError) -> MemoryBudget? {
        guard watch else { return nil }
        do {
            guard let budget, budget != "auto" else { return try MemoryBudget.resolve(.automatic(), limits: limits) }
            return try MemoryBudget(parsing: budget, limits: limits)
        } catch {
            throw ValidationError("--budget: \(error)")
        }
    }

    /// The machine's limits, read with warnings only: a notice would break the one-line error.
    private static var limits: MemoryLimits {
        var handler = StreamLogHandler.standardError(label: "mempressure")
        handler.logLevel = .warning
        return MemoryLimits.current(logger: Logger(label: "mempressure") { _ in handler })
    }

    func run() async throws {
        if watch {
            try await watchSamples()
            return
        }
        let snapshot = StatsSnapshot.take()
        if json {
            print(try snapshot.jsonText())
        } else {
            print(snapshot.text, terminator: "")
        }
    }

    /// A cgroup limit for a `--watch` line: its size and bytes, or `none`.
    private static func limitText(_ bytes: Int?) -> String {
        bytes.map { "\(ByteCount($0)) (\($0) bytes)" } ?? "none"
    }

    /// Prints `line` and flushes it at once, so that a pipe (`| tee`, a supervisor's log) sees each
    /// line as it comes rather than a buffer's worth at a time.
    private func printLine(_ line: String) {
        print(line)
        fflush(nil)  // every output stream: standard output is the one written
    }

    /// Runs a pressure monitor and prints each sample it publishes with its level.
    private func watchSamples() async throws {
        guard let resolved = try watchBudget(limits: Self.limits) else { return }
        let interval = try samplingInterval()
        let limitInterval = try limitCheckInterval()
        var configuration = PressureMonitor.Configuration(budget: resolved)
        configuration.interval = interval
        configuration.allocatorRefreshInterval = interval
        configuration.limitCheckInterval = limitInterval
        let monitor = PressureMonitor(configuration: configuration)
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }

        printLine("budget \(resolved)")
        var budget = resolved
        // The limit is watched here too: it can change without moving a budget given in bytes.
        var limit = Self.limits.controlGroupLimit
        var nextLimitCheck = ContinuousClock.now + limitInterval
        var printed = 0
        let start = ContinuousClock.now
        for await event in events {
            switch event {
            case .sample(let sample, let level):
                printLine(sample.watchLine(since: start, budget: budget, level: level))
                printed += 1
                if let count, printed >= count { return }
                if sample.time >= nextLimitCheck {
                    nextLimitCheck = sample.time + limitInterval
                    let now = Self.limits.controlGroupLimit
                    if now != limit {
                        printLine("cgroup limit changed: \(Self.limitText(limit)) -> \(Self.limitText(now))")
                        limit = now
                    }
                }
            case .change(let change):
                printLine("level \(change)")
            case .budgetChanged(let change):
                budget = change.budget
                limit = change.limitBytes
                printLine("budget changed: \(change); now \(change.budget.totalBytes) bytes, \(change.budget)")
            }
        }
    }
}
