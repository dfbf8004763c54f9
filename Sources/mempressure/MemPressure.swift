import ArgumentParser
import MemoryPressure

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `mempressure`: the memory-pressure stress tool.
@main
struct MemPressure: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mempressure",
        abstract: "Memory pressure and resource budgets for long-running Swift processes.",
        discussion: "With no subcommand, runs the default scenario: about 20 seconds of simulated apps on a 768 MiB budget.",
        subcommands: [RunScenario.self, Scenarios.self, Stats.self, Supervise.self, Ctl.self, AppProcess.self],
        defaultSubcommand: RunScenario.self
    )

    /// Runs the command; bad input of any kind (an unknown option, a value out of range, a scenario
    /// that cannot run) is one line on standard error and exit status 2.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as BadInput {
            fail(error.description)
        } catch let error as OutputFiles.OutputError {
            fail(error.description, status: 1)
        } catch where exitCode(for: error) == .validationFailure {
            fail(message(for: error))
        } catch {
            exit(withError: error)
        }
    }

    /// Prints `message` as one line, escaped for the terminal and cut at ``longestErrorLine``
    /// characters (the argument parser echoes a value given as it is), and exits with `status`.
    private static func fail(_ message: String, status: Int32 = 2) -> Never {
        let line = message.split(whereSeparator: \.isNewline).joined(separator: " ").escapedForTerminal(limit: longestErrorLine)
        var standardError = StandardError()
        print("mempressure: \(line)", to: &standardError)
        Glibc.exit(status)
    }
}

extension MemPressure {
    /// The longest error line printed, in characters; what the user gave is cut much shorter
    /// (``StringProtocol/echoed(limit:)``) wherever the tool's own messages echo it.
    static let longestErrorLine = 4096
}

/// Input the tool cannot run with: exit status 2, nothing written.
struct BadInput: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
