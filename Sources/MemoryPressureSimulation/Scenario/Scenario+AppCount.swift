import MemoryPressure

extension Scenario {
    /// The scenario with `count` apps: its first `count`, or its apps followed by copies of them in
    /// turn (`photos-2`, `music-2`, …) up to `count`. Errors name `source`.
    func resized(to count: Int, source: String) throws(SimulationError) -> Scenario {
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

    private func leftOut(_ app: AppIdentifier, count: Int, source: String) -> SimulationError {
        let needed = (apps.firstIndex { $0.name == app } ?? apps.count - 1) + 1
        return SimulationError(
            source: source, problem: "\(count) leaves out app \(app.rawValue.debugDescription), which the events of scenario \(name.debugDescription) use",
            expected: "\(needed) to \(ScenarioLimits.appCount.upperBound) apps"
        )
    }
}
