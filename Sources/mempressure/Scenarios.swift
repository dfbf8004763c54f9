import ArgumentParser
import MemoryPressure
import MemoryPressureSimulation

/// `mempressure scenarios`: the built-in scenarios, and how to write one.
struct Scenarios: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the built-in scenarios.",
        discussion: "Run one with `mempressure run --scenario NAME`, or give the path of a JSON scenario file instead."
    )

    func run() {
        let width = Scenario.builtIn.map(\.name.count).max() ?? 0
        for scenario in Scenario.builtIn {
            let name = scenario.name + String(repeating: " ", count: width - scenario.name.count)
            let figures = "\(scenario.apps.count) apps, \(ByteCount(scenario.budgetBytes)), \(scenario.duration.components.seconds)s"
            print("\(name)  \(scenario.summary) (\(figures))")
        }
        print("")
        print("Profiles: \(AppProfile.builtInNames.joined(separator: ", ")).")
        print("A scenario file is JSON with \"budget\", \"apps\" and optionally \"name\", \"duration\", \"seed\", \"profiles\",")
        print("\"random\" and \"events\"; see the ScenarioFile documentation for every key and its range.")
    }
}
