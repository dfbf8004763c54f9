import ArgumentParser
import Logging
import MemoryPressure
import MemoryPressureSimulation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `mempressure run`: a scenario of simulated apps under a memory budget, with live progress, a
/// closing summary, and optionally a JSON report, a CSV timeline and an SVG chart.
struct RunScenario: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a scenario of simulated apps under a memory budget and report what the memory system did.",
        discussion: """
            The apps allocate real memory in this process; the memory system warns them, purges their caches and \
            terminates suspended apps to keep the footprint under the budget, and the tool checks its promises as it \
            runs. Exits 1 when an invariant fails, 2 on bad input (nothing is written then).
            """
    )

    @Option(help: "A built-in scenario (see `mempressure scenarios`) or the path of a JSON scenario file.")
    var scenario = Scenario.standard.name

    @Option(parsing: .unconditional, help: "The memory budget, such as 768MiB or 1GiB (default: the scenario's).")
    var budget: String?

    @Option(parsing: .unconditional, help: "The number of apps; beyond the scenario's own, copies of them (default: the scenario's).")
    var apps: Int?

    @Option(parsing: .unconditional, help: "How long to run, such as 20s or 2m (default: the scenario's).")
    var duration: String?

    @Option(parsing: .unconditional, help: "The seed of the user's decisions (default: the scenario's).")
    var seed: UInt64?

    @Option(help: "Write the report as JSON to this file.")
    var report: String?

    @Option(help: "Write the footprint timeline as CSV to this file.")
    var timeline: String?

    @Option(help: "Write the timeline as an SVG chart to this file.")
    var chart: String?

    @Flag(help: "Run with the reclamation ladder off: the report shows what the footprint would have been.")
    var noManager = false

    @Flag(help: "Print plain progress lines, one a second, instead of the live display.")
    var quiet = false

    @Flag(help: ArgumentHelp(
        "Run each app as a child process (this tool, re-executed) instead of in this process.",
        discussion: RunProcesses.differences
    ))
    var processes = false

    func run() async throws {
        let logger = Self.logger
        let limits = MemoryLimits.current(logger: logger)
        let chosen: Scenario
        do {
            let overrides = ScenarioOverrides(budget: budget, appCount: apps, duration: duration, seed: seed)
            let option = { (setting: ScenarioOverrides.Setting) in "--\(setting.rawValue)" }
            chosen = try overrides.apply(to: try Scenario.resolve(scenario, limits: limits, source: option(.scenario)), limits: limits, label: option)
                .validated(source: "scenario \(scenario.echoed())", limits: limits)
        } catch {
            throw BadInput(error.description)
        }
        let outputs = try OutputFiles(report: report, timeline: timeline, chart: chart)
        var options = SimulationOptions(limits: limits, logger: logger)
        options.manager = !noManager
        if processes { options.processes = try RunProcesses.options() }
        let simulation = try Simulation(scenario: chosen, options: options)

        // Standard output may be a pipe whose reader goes away: its writes then fail with EPIPE,
        // and the run still finishes and writes its files. Every line is written at once.
        signal(SIGPIPE, SIG_IGN)
        var output = StandardOutput()
        output.write("mempressure: scenario \(chosen.name.escapedForTerminal()) (\(chosen.apps.count) apps, budget \(ByteCount(chosen.budgetBytes)), "
            + "\(chosen.duration.components.seconds) s, seed \(chosen.seed)), manager \(noManager ? "off" : "on")"
            + (processes ? ", apps as child processes" : "") + "\n")
        let display = ProgressDisplay(live: !quiet && isatty(STDOUT_FILENO) != 0)
        Interruption.install()
        let result = try await Interruption.cancelling { try await display.follow(simulation) }
        try Self.stopIfInterrupted(written: false)
        output.write(SummaryTable(report: result.report).text)
        if processes { output.write(RunProcesses.summary(of: result.report)) }
        try outputs.write(result)
        try Self.stopIfInterrupted(written: true)
        let violations = result.report.invariantViolations
        if !violations.isEmpty {
            var standardError = StandardError()
            print("mempressure: \(violations.count) invariant violations:", to: &standardError)
            for violation in violations { print("  \(violation.escapedForTerminal())", to: &standardError) }
            throw ExitCode(1)
        }
    }

    /// After SIGINT, SIGTERM or SIGHUP: one line saying so, and exit 128 + the signal's number.
    /// The simulation, cancelled, has removed its temporary state directory by now.
    private static func stopIfInterrupted(written: Bool) throws {
        guard let signal = Interruption.signal else { return }
        var standardError = StandardError()
        print("mempressure: stopped by \(Interruption.name(signal)); " + (written ? "the outputs were written whole before it came" : "no outputs written"), to: &standardError)
        throw ExitCode(128 + signal)
    }

    /// Warnings and errors only, on standard error, so that the memory system's notices do not
    /// break the progress display.
    private static let logger = Logger(label: "mempressure") { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = .warning
        return handler
    }
}
