import MemoryPressure
import SystemPackage

extension Scenario {
    /// The built-in scenario named `reference`, or else the scenario file at that path, checked
    /// against `limits`. An unknown name is an error from `source`, the caller's name for the setting.
    package static func resolve(_ reference: String, limits: MemoryLimits, source: String = ScenarioOverrides.Setting.scenario.rawValue) throws(SimulationError) -> Scenario {
        if let scenario = builtIn(named: reference) {
            return try scenario.validated(source: "scenario \(reference.echoed())", limits: limits)
        }
        let path = FilePath(reference)
        if reference.contains("/") || reference.hasSuffix(".json") || path.isReadableFile {
            return try ScenarioFile.load(path, limits: limits)
        }
        throw SimulationError(
            .unknownScenario, source: source, problem: "\(reference.echoed()) is neither a built-in scenario nor a file",
            expected: "one of \(builtIn.map(\.name).joined(separator: ", ")) or the path of a JSON scenario file"
        )
    }
}

extension FilePath {
    /// Whether a file at the path can be opened for reading (without waiting, should it be a FIFO).
    fileprivate var isReadableFile: Bool {
        guard let file = try? FileDescriptor.open(self, .readOnly, options: [.closeOnExec, .nonBlocking]) else { return false }
        try? file.close()
        return true
    }
}
