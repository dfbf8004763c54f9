import MemoryPressure

/// What the command line changes in a scenario: its budget, app count, duration and seed, as
/// typed. Each is checked against its range and named by its option in errors.
public struct ScenarioOverrides: Hashable, Sendable {
    /// A size such as `1GiB`, or nil to keep the scenario's.
    public var budget: String?
    /// The number of apps, or nil to keep the scenario's.
    public var appCount: Int?
    /// A duration such as `30s`, or nil to keep the scenario's.
    public var duration: String?
    /// The seed, or nil to keep the scenario's.
    public var seed: UInt64?

    /// Overrides of the figures given.
    public init(budget: String? = nil, appCount: Int? = nil, duration: String? = nil, seed: UInt64? = nil) {
        self.budget = budget
        self.appCount = appCount
        self.duration = duration
        self.seed = seed
    }

    /// `scenario` with the overrides applied, each checked.
    public func apply(to scenario: Scenario, limits: MemoryLimits) throws(ScenarioError) -> Scenario {
        var scenario = scenario
        if let appCount {
            scenario = try scenario.resized(to: appCount, source: "--apps")
        }
        if let duration {
            scenario.duration = try Self.parseDuration(duration, source: "--duration")
            let range = ScenarioLimits.duration
            guard range.contains(scenario.duration) else {
                throw ScenarioError(source: "--duration", problem: "\(scenario.duration.text) is out of range", expected: "\(range.lowerBound.text) to \(range.upperBound.text)")
            }
            scenario.events.removeAll { $0.time > scenario.duration }
        }
        if let budget {
            let bytes: Int
            do {
                bytes = try ByteCount(parsing: budget).bytes
            } catch {
                throw ScenarioError(source: "--budget", problem: "\(budget.debugDescription) is not a size", expected: ByteCount.formHint)
            }
            try scenario.checkBudget(bytes, field: nil, source: "--budget", limits: limits)
            scenario.budgetBytes = bytes
        }
        if let seed {
            scenario.seed = seed
        }
        return scenario
    }

    /// Parses a duration, naming a negative one as such.
    static func parseDuration(_ text: String, source: String, field: String? = nil) throws(ScenarioError) -> Duration {
        let range = ScenarioLimits.duration
        if text.drop(while: \.isWhitespace).hasPrefix("-") {
            throw ScenarioError(source: source, field: field, problem: "\(text.debugDescription) is negative", expected: "\(range.lowerBound.text) to \(range.upperBound.text)")
        }
        do {
            return try DurationParser.parse(text)
        } catch {
            throw ScenarioError(source: source, field: field, problem: "\(text.debugDescription) is not a duration", expected: "a number and a unit (ms, s, m, h), such as 20s")
        }
    }
}

extension ByteCount {
    /// The accepted form of a size, as errors state it.
    static let formHint = "a number and a unit (B, KiB, MiB, GiB, or KB, MB, GB), such as 768MiB or 1GiB"
}

extension Scenario {
    /// The scenario with `count` apps: its first `count`, or its apps followed by copies of them in
    /// turn (`photos-2`, `music-2`, …) up to `count`.
    func resized(to count: Int, source: String) throws(ScenarioError) -> Scenario {
        try checkAppCount(count, field: nil, source: source)
        var scenario = self
        if count <= apps.count {
            scenario.apps = Array(apps.prefix(count))
            let kept = Set(scenario.apps.map(\.name))
            for event in events {
                if case .open(let app) = event.action, !kept.contains(app) { throw leftOut(app, count: count, source: source) }
                if case .backgroundLaunch(let app, _) = event.action, !kept.contains(app) { throw leftOut(app, count: count, source: source) }
            }
            return scenario
        }
        var taken = Set(apps.map(\.name.rawValue))
        var copy = 2
        while scenario.apps.count < count {
            for original in apps where scenario.apps.count < count {
                var name = "\(original.name.rawValue)-\(copy)"
                while taken.contains(name) { name += "x" }
                taken.insert(name)
                guard let identifier = try? AppIdentifier(name) else { continue }
                scenario.apps.append(ScenarioApp(name: identifier, profile: original.profile))
            }
            copy += 1
        }
        return scenario
    }

    private func leftOut(_ app: AppIdentifier, count: Int, source: String) -> ScenarioError {
        let needed = (apps.firstIndex { $0.name == app } ?? apps.count - 1) + 1
        return ScenarioError(
            source: source, problem: "\(count) leaves out app \(app.rawValue.debugDescription), which the events of scenario \(name.debugDescription) use",
            expected: "\(needed) to \(ScenarioLimits.appCount.upperBound) apps"
        )
    }
}
