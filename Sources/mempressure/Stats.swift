import ArgumentParser
import Jemalloc
@_spi(Benchmarks) import MemoryPressure

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

    @Option(help: "Time between samples with --watch, such as 500ms, 2s or 1.5m.", transform: { text in
        try DurationParser.parse(text)
    })
    var interval: Duration = .seconds(1)

    @Option(help: "Budget the level is judged against with --watch, such as 512MiB, 2GiB or 1.5G (default: 90% of the cgroup's limit, else of physical memory).")
    var budget: String?

    @Option(help: "Stop after this many samples with --watch.")
    var count: Int?

    func validate() throws {
        if let count, count < 1 {
            throw ValidationError("--count \(count) is not positive; expected 1 or more samples")
        }
        if interval <= .zero {
            throw ValidationError("--interval \(interval) is not positive; expected a duration greater than zero, such as 500ms")
        }
        if !watch, budget != nil || count != nil {
            throw ValidationError("--budget and --count apply only with --watch")
        }
        if watch, json {
            throw ValidationError("--json applies only without --watch")
        }
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

    /// Runs a pressure monitor and prints each sample it publishes with its level.
    private func watchSamples() async throws {
        let resolved = try budget.map { text throws(MemoryPressureError) in try MemoryBudget(parsing: text) }
            ?? MemoryBudget.resolve(.automatic())
        var configuration = PressureMonitor.Configuration(budget: resolved)
        configuration.interval = interval
        configuration.allocatorRefreshInterval = interval
        let monitor = PressureMonitor(configuration: configuration)
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }

        print("budget \(resolved)")
        var printed = 0
        let start = ContinuousClock.now
        for await event in events {
            switch event {
            case .sample(let sample, let level):
                print(sample.watchLine(since: start, budget: resolved, level: level))
                printed += 1
                if let count, printed >= count { return }
            case .change(let change):
                print("level \(change)")
            }
        }
    }
}
