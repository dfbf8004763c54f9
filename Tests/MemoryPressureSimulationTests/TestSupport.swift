import MemoryPressure
@testable import MemoryPressureSimulation

/// A machine of 8 GiB without a cgroup limit, so budget checks do not depend on the test machine.
let eightGiBMachine = MemoryLimits(physicalBytes: 8 << 30)

/// Parses `json` as a scenario file named `test.json`.
func parseScenario(_ json: String) throws(SimulationError) -> Scenario {
    try ScenarioFile.parse(Array(json.utf8), source: "scenario file test.json", defaultName: "test", limits: eightGiBMachine)
}
