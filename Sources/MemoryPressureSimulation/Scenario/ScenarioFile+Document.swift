import MemoryPressure

extension ScenarioFile {
    /// A scenario file's JSON, each key typed and named by its path. Ranges are checked afterwards
    /// by ``Scenario/validated(source:limits:)``.
    struct Document: Decodable {
        private enum Keys: String, CodingKey, CaseIterable { case name, summary, budget, duration, seed, profiles, apps, random, events }

        /// The scenario, its name and summary empty: ``ScenarioFile/parse(_:source:defaultName:limits:)``
        /// gives them from ``name`` and ``summary`` or the file's name.
        let scenario: Scenario
        let name: String?, summary: String?

        init(from decoder: any Decoder) throws {
            let fields = try decoder.object(Keys.self)
            name = try fields.field(.name, expected: "a string")
            summary = try fields.field(.summary, expected: "a string")
            let budget = try fields.required(try fields.size(.budget), .budget, expected: "a size such as \"768MiB\"")
            let duration = try fields.duration(.duration) ?? Scenario.standard.duration
            let seed: UInt64 = try fields.field(.seed, expected: "a whole number from 0 to \(UInt64.max)") ?? 1
            let profiles = try fields.decodeIfPresent(Profiles.self, forKey: .profiles)?.byName ?? [:]
            let entries: [AppEntry]? = try fields.field(.apps, expected: "an array")
            let apps = try fields.required(entries, .apps, expected: "an array of apps").map { entry in
                guard let profile = AppProfile.builtIn[entry.profile] ?? profiles[entry.profile] else {
                    throw SimulationError.at(
                        entry.profilePath, "\(entry.profile.echoed()) is not a known profile",
                        expected: "one of \(AppProfile.builtInNames.joined(separator: ", ")) or a name under \"profiles\""
                    )
                }
                return ScenarioApp(name: entry.name, profile: profile)
            }
            let random = try fields.decodeIfPresent(Random.self, forKey: .random)?.activity
            let events: [Event]? = try fields.field(.events, expected: "an array")
            try decoder.rejectUnknownKeys(Keys.allCases)
            scenario = Scenario(
                name: "", summary: "", budgetBytes: budget, duration: duration, seed: seed,
                apps: apps, randomActivity: random, events: events?.map(\.event) ?? []
            )
        }
    }

    /// An app of a scenario file: the name of a profile, short for an app of that name, or
    /// `{ "name", "profile" }`. Its profile is looked up once every app is read.
    struct AppEntry: Decodable {
        private enum Keys: String, CodingKey, CaseIterable { case name, profile }

        let name: AppIdentifier
        /// The name of its profile, built in or defined under "profiles", and where the file gives it.
        let profile: String, profilePath: [any CodingKey]

        init(from decoder: any Decoder) throws {
            if let name = try? decoder.singleValueContainer().decode(String.self) {
                (self.name, profile, profilePath) = (try AppIdentifier(name, at: decoder.codingPath), name, decoder.codingPath)
                return
            }
            let fields = try decoder.object(Keys.self)
            let name: String? = try fields.field(.name, expected: "the app's name")
            let profile: String? = try fields.field(.profile, expected: "the name of a profile")
            try decoder.rejectUnknownKeys(Keys.allCases)
            let given = try fields.required(name, .name, expected: "the app's name")
            self.profile = try fields.required(profile, .profile, expected: "the name of a profile")
            self.name = try AppIdentifier(given, at: fields.codingPath + [Keys.name])
            profilePath = fields.codingPath + [Keys.profile]
        }
    }
}

extension AppIdentifier {
    /// The identifier `name`, given at `path` in a scenario file.
    init(_ name: String, at path: [any CodingKey]) throws {
        do {
            try self.init(name)
        } catch {
            throw SimulationError.at(
                path, "\(name.echoed()) is not a usable app name", expected: "1 to 255 bytes without '/', '\\' or control characters, not '.' or '..'"
            )
        }
    }
}
