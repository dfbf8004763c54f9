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
        guard !apps.isEmpty else {
            throw SimulationError(source: source, problem: "\(count) apps cannot be copies of a scenario with none", expected: "a scenario with apps")
        }
        var taken = Set(apps.map(\.name))
        var copy = 2
        while scenario.apps.count < count {
            for original in apps where scenario.apps.count < count {
                let name = try Self.copyName(of: original.name, copy: copy, avoiding: taken, source: source)
                taken.insert(name)
                scenario.apps.append(ScenarioApp(name: name, profile: original.profile))
            }
            copy += 1
        }
        return scenario
    }

    /// `name-copy`, or `name-copyx`, `name-copyxx`, … when that is taken, with `name` cut (at a
    /// Unicode scalar) so that the whole stays within ``AppIdentifier/maximumByteCount``. The
    /// candidates all differ, so one of the first `taken.count + 1` is free: bounded whatever the
    /// names.
    private static func copyName(
        of name: AppIdentifier, copy: Int, avoiding taken: Set<AppIdentifier>, source: String
    ) throws(SimulationError) -> AppIdentifier {
        for extra in 0 ... taken.count {
            let suffix = "-\(copy)" + String(repeating: "x", count: extra)
            var base = String.UnicodeScalarView()
            var length = 0
            for scalar in name.rawValue.unicodeScalars {
                length += UTF8.width(scalar)
                guard length + suffix.utf8.count <= AppIdentifier.maximumByteCount else { break }
                base.append(scalar)
            }
            guard let candidate = try? AppIdentifier(String(base) + suffix), !taken.contains(candidate) else { continue }
            return candidate
        }
        throw SimulationError(
            source: source, problem: "no free name for copy \(copy) of app \(name.rawValue.echoed())",
            expected: "app names that leave room for copies"
        )
    }

    private func leftOut(_ app: AppIdentifier, count: Int, source: String) -> SimulationError {
        let needed = (apps.firstIndex { $0.name == app } ?? apps.count - 1) + 1
        return SimulationError(
            source: source, problem: "\(count) leaves out app \(app.rawValue.echoed()), which the events of scenario \(name.echoed()) use",
            expected: "\(needed) to \(ScenarioLimits.appCount.upperBound) apps"
        )
    }
}
