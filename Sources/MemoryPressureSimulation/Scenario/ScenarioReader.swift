import MemoryPressure

/// Turns a scenario file's JSON into a ``Scenario``: every key read, typed and named by its path.
/// Ranges are checked afterwards by ``Scenario/validated(source:limits:)``.
struct ScenarioReader {
    let source: String
    private var profiles = AppProfile.builtIn

    init(source: String) {
        self.source = source
    }

    mutating func scenario(_ document: JSONValue, defaultName: String) throws(SimulationError) -> Scenario {
        var root = try JSONFields(document, path: "", source: source)
        let name = try root.string("name", expected: "a string") ?? defaultName
        let summary = try root.string("summary", expected: "a string") ?? "Scenario file \(defaultName)."
        guard let budget = try root.size("budget") else {
            throw SimulationError(source: source, field: "budget", problem: "is missing", expected: "a size such as \"768MiB\"")
        }
        let duration = try root.duration("duration") ?? Scenario.standard.duration
        let seed = try root.optional("seed").map { value throws(SimulationError) -> UInt64 in
            guard case .unsigned(let seed) = value else { throw root.mismatch(value, "seed", expected: "a whole number from 0 to \(UInt64.max)") }
            return seed
        } ?? 1
        if let definitions = root.optional("profiles") {
            try readProfiles(definitions)
        }
        let apps = try readApps(try root.required("apps", expected: "an array of apps"))
        let random = try root.optional("random").map { value throws(SimulationError) in try randomActivity(value) }
        var events: [ScenarioEvent] = []
        if let list = root.optional("events") {
            events = try elements(of: list, "events").map { element throws(SimulationError) in try event(element.value, element.path) }
        }
        try root.finish()
        return Scenario(
            name: name, summary: summary, budgetBytes: budget, duration: duration, seed: seed,
            apps: apps, randomActivity: random, events: events
        )
    }

    // MARK: Profiles and apps

    private mutating func readProfiles(_ value: JSONValue) throws(SimulationError) {
        let definitions = try JSONFields(value, path: "profiles", source: source)
        for name in definitions.values.keys.sorted() {
            let field = definitions.field(name)
            guard AppProfile.builtIn[name] == nil else {
                throw SimulationError(source: source, field: field, problem: "redefines a built-in profile", expected: "a name other than \(AppProfile.builtInNames.joined(separator: ", "))")
            }
            profiles[name] = try definedProfile(named: name, definitions.values[name] ?? .null, field)
        }
    }

    private func definedProfile(named name: String, _ value: JSONValue, _ path: String) throws(SimulationError) -> AppProfile {
        var fields = try JSONFields(value, path: path, source: source)
        let baseName = try fields.string("base", expected: "the name of a built-in profile")
        guard let baseName, var profile = AppProfile.builtIn[baseName] else {
            throw SimulationError(
                source: source, field: fields.field("base"), problem: baseName.map { "\($0.debugDescription) is not a built-in profile" } ?? "is missing",
                expected: "one of \(AppProfile.builtInNames.joined(separator: ", "))"
            )
        }
        profile.name = name
        if let cacheValue = fields.optional("cache") {
            var cache = try JSONFields(cacheValue, path: fields.field("cache"), source: source)
            if let kind = try cache.string("kind", expected: "a cache kind") {
                guard let parsed = CacheKind(rawValue: kind) else {
                    throw SimulationError(source: source, field: cache.field("kind"), problem: "\(kind.debugDescription) is not a cache kind", expected: "one of \(CacheKind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                profile.cache.kind = parsed
            }
            profile.cache.entryBytes = try cache.sizeRange("entrySize") ?? profile.cache.entryBytes
            profile.cache.limitBytes = try cache.size("limit") ?? profile.cache.limitBytes
            profile.cache.bytesPerSecond = try cache.size("growth") ?? profile.cache.bytesPerSecond
            try cache.finish()
        }
        profile.screens = try fields.integer("screens") ?? profile.screens
        profile.backingStoreBytes = try fields.size("backingStore") ?? profile.backingStoreBytes
        profile.launchBytes = try fields.size("launch") ?? profile.launchBytes
        if let workingSetValue = fields.optional("workingSet") {
            var workingSet = try JSONFields(workingSetValue, path: fields.field("workingSet"), source: source)
            profile.workingSet.bytesPerSecond = try workingSet.size("growth") ?? profile.workingSet.bytesPerSecond
            profile.workingSet.limitBytes = try workingSet.size("limit") ?? profile.workingSet.limitBytes
            try workingSet.finish()
        }
        profile.keptOnWarning = try fields.number("keptOnWarning") ?? profile.keptOnWarning
        profile.fetchBytes = try fields.size("fetch") ?? profile.fetchBytes
        if fields.values["playback"] == .null {
            profile.playback = nil
        }
        if let playbackValue = fields.optional("playback") {
            var playback = try JSONFields(playbackValue, path: fields.field("playback"), source: source)
            let standard = AppProfile.music.playback
            profile.playback = AppProfile.Playback(
                bufferBytes: try playback.size("buffer") ?? profile.playback?.bufferBytes ?? standard?.bufferBytes ?? 0,
                backgroundLength: try playback.duration("backgroundLength") ?? profile.playback?.backgroundLength ?? standard?.backgroundLength ?? .zero
            )
            try playback.finish()
        }
        try fields.finish()
        return profile
    }

    private func readApps(_ value: JSONValue) throws(SimulationError) -> [ScenarioApp] {
        try elements(of: value, "apps").map { element throws(SimulationError) in
            // "maps" is short for { "name": "maps", "profile": "maps" }.
            if case .string(let name) = element.value {
                return ScenarioApp(name: try identifier(name, element.path), profile: try profile(named: name, element.path))
            }
            var fields = try JSONFields(element.value, path: element.path, source: source)
            let name = try fields.string("name", expected: "the app's name")
            let profileName = try fields.string("profile", expected: "the name of a profile")
            try fields.finish()
            guard let name else { throw SimulationError(source: source, field: fields.field("name"), problem: "is missing", expected: "the app's name") }
            guard let profileName else {
                throw SimulationError(source: source, field: fields.field("profile"), problem: "is missing", expected: "the name of a profile")
            }
            return ScenarioApp(name: try identifier(name, fields.field("name")), profile: try profile(named: profileName, fields.field("profile")))
        }
    }

    /// The profile named `name`, built in or defined under "profiles".
    private func profile(named name: String, _ field: String) throws(SimulationError) -> AppProfile {
        guard let profile = profiles[name] else {
            throw SimulationError(
                source: source, field: field, problem: "\(name.debugDescription) is not a known profile",
                expected: "one of \(AppProfile.builtInNames.joined(separator: ", ")) or a name under \"profiles\""
            )
        }
        return profile
    }

    private func identifier(_ name: String, _ field: String) throws(SimulationError) -> AppIdentifier {
        do {
            return try AppIdentifier(name)
        } catch {
            throw SimulationError(source: source, field: field, problem: "\(name.debugDescription) is not a usable app name", expected: "1 to 255 bytes without '/', '\\' or control characters, not '.' or '..'")
        }
    }

    // MARK: Activity

    private func randomActivity(_ value: JSONValue) throws(SimulationError) -> RandomActivity {
        var fields = try JSONFields(value, path: "random", source: source)
        let standard = Scenario.standard.randomActivity!
        var weights = RandomActivity.Weights(open: 0, home: 0, interruption: 0, backgroundLaunch: 0, spike: 0)
        if let weightsValue = fields.optional("weights") {
            var weightFields = try JSONFields(weightsValue, path: fields.field("weights"), source: source)
            weights.open = try weightFields.number("open") ?? 0
            weights.home = try weightFields.number("home") ?? 0
            weights.interruption = try weightFields.number("interruption") ?? 0
            weights.backgroundLaunch = try weightFields.number("backgroundLaunch") ?? 0
            weights.spike = try weightFields.number("spike") ?? 0
            try weightFields.finish()
        } else {
            weights = standard.weights
        }
        let activity = RandomActivity(
            meanGap: try fields.duration("meanGap") ?? standard.meanGap,
            weights: weights,
            interruptionLength: try fields.durationRange("interruptionLength") ?? standard.interruptionLength,
            backgroundWork: try fields.durationRange("backgroundWork") ?? standard.backgroundWork,
            spikeBytes: try fields.sizeRange("spikeSize") ?? standard.spikeBytes,
            spikeHold: try fields.durationRange("spikeHold") ?? standard.spikeHold
        )
        try fields.finish()
        return activity
    }

    private func event(_ value: JSONValue, _ path: String) throws(SimulationError) -> ScenarioEvent {
        var fields = try JSONFields(value, path: path, source: source)
        let kinds = ["open", "home", "interruption", "backgroundLaunch", "spike"]
        let time = try fields.duration("at")
        guard let time else {
            throw SimulationError(source: source, field: fields.field("at"), problem: "is missing", expected: "the time from the start, such as \"5s\"")
        }
        let kind = try fields.string("kind", expected: "one of \(kinds.joined(separator: ", "))")
        func required<Value>(_ key: String, _ read: (inout JSONFields) throws(SimulationError) -> Value?, expected: String) throws(SimulationError) -> Value {
            guard let value = try read(&fields) else {
                throw SimulationError(source: source, field: fields.field(key), problem: "is missing", expected: expected)
            }
            return value
        }
        func app() throws(SimulationError) -> AppIdentifier {
            let name = try required("app", { fields throws(SimulationError) in try fields.string("app", expected: "the name of an app") }, expected: "the name of an app")
            return try identifier(name, fields.field("app"))
        }
        let action: ScenarioEvent.Action
        switch kind {
        case "open":
            action = .open(try app())
        case "home":
            action = .home
        case "interruption":
            action = .interruption(length: try required("length", { fields throws(SimulationError) in try fields.duration("length") }, expected: "a duration"))
        case "backgroundLaunch":
            let launched = try app()
            action = .backgroundLaunch(launched, work: try required("work", { fields throws(SimulationError) in try fields.duration("work") }, expected: "a duration"))
        case "spike":
            let bytes = try required("size", { fields throws(SimulationError) in try fields.size("size") }, expected: "a size")
            action = .spike(bytes: bytes, hold: try required("hold", { fields throws(SimulationError) in try fields.duration("hold") }, expected: "a duration"))
        default:
            throw SimulationError(
                source: source, field: fields.field("kind"), problem: kind.map { "\($0.debugDescription) is not a kind of event" } ?? "is missing",
                expected: "one of \(kinds.joined(separator: ", "))"
            )
        }
        try fields.finish()
        return ScenarioEvent(time: time, action: action)
    }

    // MARK: Arrays

    private func elements(of value: JSONValue, _ path: String) throws(SimulationError) -> [(value: JSONValue, path: String)] {
        guard case .array(let list) = value else {
            throw SimulationError(source: source, field: path, problem: "is \(value.kind)", expected: "an array")
        }
        return list.enumerated().map { ($0.element, "\(path)[\($0.offset)]") }
    }
}
