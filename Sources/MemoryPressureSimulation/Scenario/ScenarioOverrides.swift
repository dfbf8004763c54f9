import MemoryPressure

/// Changes to a scenario's budget, app count, duration and seed, as a user typed them. Each is
/// checked against its range; errors name the setting by the caller's label for it (a command-line
/// tool passes its option names).
package struct ScenarioOverrides: Hashable, Sendable {
    /// The settings a user can change, by their names.
    package enum Setting: String, Hashable, Sendable, CaseIterable {
        case scenario, budget, apps, duration, seed
    }

    /// A size such as `1GiB`, or nil to keep the scenario's.
    package var budget: String?
    /// The number of apps, or nil to keep the scenario's.
    package var appCount: Int?
    /// A duration such as `30s`, or nil to keep the scenario's.
    package var duration: String?
    /// The seed, or nil to keep the scenario's.
    package var seed: UInt64?

    /// Overrides of the figures given.
    package init(budget: String? = nil, appCount: Int? = nil, duration: String? = nil, seed: UInt64? = nil) {
        self.budget = budget
        self.appCount = appCount
        self.duration = duration
        self.seed = seed
    }

    /// `scenario` with the overrides applied, each checked; errors name a setting by `label(setting)`.
    package func apply(
        to scenario: Scenario, limits: MemoryLimits, label: (Setting) -> String = \.rawValue
    ) throws(SimulationError) -> Scenario {
        var scenario = scenario
        if let appCount {
            scenario = try scenario.resized(to: appCount, source: label(.apps))
        }
        if let duration {
            scenario.duration = try Self.parseDuration(duration, source: label(.duration))
            let range = ScenarioLimits.duration
            guard range.contains(scenario.duration) else {
                throw SimulationError(source: label(.duration), problem: "\(scenario.duration.text) is out of range", expected: "\(range.lowerBound.text) to \(range.upperBound.text)")
            }
            scenario.events.removeAll { $0.time > scenario.duration }
        }
        if let budget {
            let bytes: Int
            do {
                bytes = try ByteCount(parsing: budget).bytes
            } catch {
                throw SimulationError(source: label(.budget), cause: error)
            }
            try scenario.checkBudget(bytes, field: nil, source: label(.budget), limits: limits)
            scenario.budgetBytes = bytes
        }
        if let seed {
            scenario.seed = seed
        }
        return scenario
    }

    /// Parses a duration, naming a negative one as such. Errors name `source` and `field`; a scenario
    /// file's have no source until the file is known (``SimulationError/from(_:)``).
    static func parseDuration(_ text: String, source: String?, field: String? = nil) throws(SimulationError) -> Duration {
        let range = ScenarioLimits.duration
        if text.drop(while: \.isWhitespace).hasPrefix("-") {
            throw SimulationError(source: source, field: field, problem: "\(text.echoed()) is negative", expected: "\(range.lowerBound.text) to \(range.upperBound.text)")
        }
        do {
            return try DurationParser.parse(text)
        } catch {
            throw SimulationError(source: source, field: field, problem: "\(text.echoed()) is not a duration", expected: "a number and a unit (ms, s, m, h), such as 20s")
        }
    }
}
