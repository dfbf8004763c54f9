import MemoryPressure

extension Scenario {
    /// The scenario, once every figure is checked against its range (``ScenarioLimits``), the app
    /// names are unique, the events name apps of the scenario and fall within its duration, and then
    /// the budget fits both the scenario (``minimumBudgetBytes``, which needs valid profiles) and the
    /// machine (`limits`). Throws the first problem, naming its field as a path into a scenario file.
    package func validated(source: String, limits: MemoryLimits) throws(SimulationError) -> Scenario {
        guard !name.isEmpty, name.count <= 64, !name.contains(where: \.isNewline) else {
            throw SimulationError(source: source, field: "name", problem: "\(name.echoed()) is not a usable name", expected: "1 to 64 characters on one line")
        }
        try ScenarioLimits.check(duration, in: ScenarioLimits.duration, "duration", source: source)
        try checkAppCount(apps.count, field: "apps", source: source)
        var seen: Set<AppIdentifier> = []
        for (index, app) in apps.enumerated() where !seen.insert(app.name).inserted {
            throw SimulationError(
                source: source, field: "apps[\(index)].name", problem: "\(app.name.rawValue.echoed()) is used twice",
                expected: "a different name for each app"
            )
        }
        var checkedProfiles: Set<AppProfile> = []
        for app in apps where checkedProfiles.insert(app.profile).inserted {
            try app.profile.validate(field: "profiles.\(app.profile.name)", source: source)
        }
        try randomActivity?.validate(field: "random", source: source)
        for (index, event) in events.enumerated() {
            try event.validate(field: "events[\(index)]", apps: seen, duration: duration, source: source)
        }
        try checkBudget(budgetBytes, field: "budget", source: source, limits: limits)
        return self
    }

    /// Throws unless `bytes` is a budget this scenario can be held to on this machine.
    func checkBudget(_ bytes: Int, field: String?, source: String, limits: MemoryLimits) throws(SimulationError) {
        let minimum = max(ScenarioLimits.budgetFloorBytes, minimumBudgetBytes)
        do {
            _ = try MemoryBudget(totalBytes: bytes, limits: limits)
        } catch {
            guard let limit = error.exceededLimit else {
                throw SimulationError(source: source, field: field, problem: "\(bytes) bytes is not positive", expected: "at least \(ByteCount(minimum))")
            }
            throw SimulationError(
                source: source, field: field, problem: "\(ByteCount(bytes)) exceeds \(limit.name) of \(ByteCount(limit.bytes))",
                expected: "\(ByteCount(minimum)) to \(ByteCount(limit.bytes))"
            )
        }
        guard bytes >= minimum else {
            throw SimulationError(
                source: source, field: field,
                problem: "\(ByteCount(bytes)) is too small for scenario \(name.echoed()) (its largest app holds up to "
                    + "\(ByteCount(apps.map(\.profile.unpurgeableBytes).max() ?? 0)) that only termination returns)",
                expected: "at least \(ByteCount(minimum))"
            )
        }
    }

    func checkAppCount(_ count: Int, field: String?, source: String) throws(SimulationError) {
        guard !ScenarioLimits.appCount.contains(count) else { return }
        throw SimulationError(
            source: source, field: field, problem: "\(count) apps is out of range",
            expected: "\(ScenarioLimits.appCount.lowerBound) to \(ScenarioLimits.appCount.upperBound) apps"
        )
    }
}

extension AppProfile {
    /// Throws unless every figure is in its range; fields are named under `field`.
    func validate(field: String, source: String) throws(SimulationError) {
        typealias Limits = ScenarioLimits
        try Limits.checkOrder(cache.entryBytes.lowerBound, cache.entryBytes.upperBound, "\(field).cache.entrySize", source: source) { "\(ByteCount($0))" }
        try Limits.check(bytes: cache.entryBytes.lowerBound, in: Limits.entryBytes, "\(field).cache.entrySize", source: source)
        try Limits.check(bytes: cache.entryBytes.upperBound, in: Limits.entryBytes, "\(field).cache.entrySize", source: source)
        try Limits.check(bytes: cache.limitBytes, in: Limits.regionBytes, "\(field).cache.limit", source: source)
        try Limits.check(bytes: cache.bytesPerSecond, in: Limits.bytesPerSecond, "\(field).cache.growth", source: source)
        try Limits.check(screens, in: Limits.screens, "\(field).screens", source: source)
        try Limits.check(bytes: backingStoreBytes, in: Limits.backingStoreBytes, "\(field).backingStore", source: source)
        try Limits.check(bytes: launchBytes, in: Limits.regionBytes, "\(field).launch", source: source)
        try Limits.check(bytes: workingSet.bytesPerSecond, in: Limits.bytesPerSecond, "\(field).workingSet.growth", source: source)
        try Limits.check(bytes: workingSet.limitBytes, in: Limits.regionBytes, "\(field).workingSet.limit", source: source)
        try Limits.check(keptOnWarning, in: 0 ... 1, "\(field).keptOnWarning", source: source)
        try Limits.check(bytes: fetchBytes, in: Limits.regionBytes, "\(field).fetch", source: source)
        if let playback {
            try Limits.check(bytes: playback.bufferBytes, in: Limits.regionBytes, "\(field).playback.buffer", source: source)
            try Limits.check(playback.backgroundLength, in: Limits.span, "\(field).playback.backgroundLength", source: source)
        }
    }
}

extension RandomActivity {
    /// Throws unless every figure is in its range and at least one weight is positive.
    func validate(field: String, source: String) throws(SimulationError) {
        typealias Limits = ScenarioLimits
        try Limits.check(meanGap, in: Limits.meanGap, "\(field).meanGap", source: source)
        for kind in Kind.allCases {
            try Limits.check(weights[kind], in: Limits.weight, "\(field).weights.\(kind.rawValue)", source: source)
        }
        guard Kind.allCases.contains(where: { weights[$0] > 0 }) else {
            let names = Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw SimulationError(source: source, field: "\(field).weights", problem: "has no positive weight", expected: "at least one of \(names) above 0")
        }
        for (name, range) in [("interruptionLength", interruptionLength), ("backgroundWork", backgroundWork), ("spikeHold", spikeHold)] {
            try Limits.checkOrder(range.lowerBound, range.upperBound, "\(field).\(name)", source: source) { $0.text }
            try Limits.check(range.lowerBound, in: Limits.span, "\(field).\(name)", source: source)
            try Limits.check(range.upperBound, in: Limits.span, "\(field).\(name)", source: source)
        }
        try Limits.checkOrder(spikeBytes.lowerBound, spikeBytes.upperBound, "\(field).spikeSize", source: source) { "\(ByteCount($0))" }
        try Limits.check(bytes: spikeBytes.lowerBound, in: Limits.spikeBytes, "\(field).spikeSize", source: source)
        try Limits.check(bytes: spikeBytes.upperBound, in: Limits.spikeBytes, "\(field).spikeSize", source: source)
    }
}

extension ScenarioEvent {
    /// Throws unless the event falls within the session, names one of `apps`, and its figures are
    /// in range.
    func validate(field: String, apps: Set<AppIdentifier>, duration: Duration, source: String) throws(SimulationError) {
        typealias Limits = ScenarioLimits
        try Limits.check(time, in: .zero ... duration, "\(field).at", source: source)
        switch action {
        case .open(let app), .backgroundLaunch(let app, _):
            guard apps.contains(app) else {
                throw SimulationError(
                    source: source, field: "\(field).app", problem: "\(app.rawValue.echoed()) is not an app of the scenario",
                    expected: "one of \(Self.listed(apps.sorted().map(\.rawValue)))"
                )
            }
            if case .backgroundLaunch(_, let work) = action {
                try Limits.check(work, in: Limits.span, "\(field).work", source: source)
            }
        case .home:
            break
        case .interruption(let length):
            try Limits.check(length, in: Limits.span, "\(field).length", source: source)
        case .spike(let bytes, let hold):
            try Limits.check(bytes: bytes, in: Limits.spikeBytes, "\(field).size", source: source)
            try Limits.check(hold, in: Limits.span, "\(field).hold", source: source)
        }
    }

    /// `names` for a message: the first 8, each escaped and cut to 40 characters, then how many
    /// more there are.
    private static func listed(_ names: [String]) -> String {
        let shown = names.prefix(8).map { $0.escapedForTerminal(limit: 40) }.joined(separator: ", ")
        return names.count > 8 ? "\(shown) and \(names.count - 8) more" : shown
    }
}
