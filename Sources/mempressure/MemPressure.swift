import ArgumentParser

/// `mempressure`: the memory-pressure stress tool.
@main
struct MemPressure: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mempressure",
        abstract: "Memory pressure and resource budgets for long-running Swift processes.",
        subcommands: [Stats.self],
        defaultSubcommand: Stats.self
    )
}
