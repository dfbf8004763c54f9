extension ScenarioFile {
    /// The profiles a scenario file defines under "profiles", by name: each a built-in profile with
    /// some figures changed.
    struct Profiles: Decodable {
        let byName: [String: AppProfile]

        init(from decoder: any Decoder) throws {
            let fields = try decoder.object(AnyKey.self)
            var byName: [String: AppProfile] = [:]
            for key in fields.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                guard AppProfile.builtIn[key.stringValue] == nil else {
                    throw SimulationError.at(
                        fields.codingPath + [key], "redefines a built-in profile",
                        expected: "a name other than \(AppProfile.builtInNames.joined(separator: ", "))"
                    )
                }
                var profile = try fields.decode(DefinedProfile.self, forKey: key).profile
                profile.name = key.stringValue
                byName[key.stringValue] = profile
            }
            self.byName = byName
        }
    }

    /// A profile of a scenario file: its built-in `base`, with the figures given changed.
    struct DefinedProfile: Decodable {
        private enum Keys: String, CodingKey, CaseIterable { case base, cache, screens, backingStore, launch, workingSet, keptOnWarning, fetch, playback }
        private enum CacheKeys: String, CodingKey, CaseIterable { case kind, entrySize, limit, growth }
        private enum GrowthKeys: String, CodingKey, CaseIterable { case growth, limit }
        private enum PlaybackKeys: String, CodingKey, CaseIterable { case buffer, backgroundLength }

        let profile: AppProfile

        init(from decoder: any Decoder) throws {
            let fields = try decoder.object(Keys.self)
            let baseName: String? = try fields.field(.base, expected: "the name of a built-in profile")
            guard let baseName, var profile = AppProfile.builtIn[baseName] else {
                throw SimulationError.at(
                    fields.codingPath + [Keys.base], baseName.map { "\($0.echoed()) is not a built-in profile" } ?? "is missing",
                    expected: "one of \(AppProfile.builtInNames.joined(separator: ", "))"
                )
            }
            try fields.object(.cache, CacheKeys.self) { cache in
                profile.cache.kind = try cache.choice(.kind, "a cache kind", expected: "a cache kind") ?? profile.cache.kind
                profile.cache.entryBytes = try cache.range(.entrySize, of: Size.self) ?? profile.cache.entryBytes
                profile.cache.limitBytes = try cache.size(.limit) ?? profile.cache.limitBytes
                profile.cache.bytesPerSecond = try cache.size(.growth) ?? profile.cache.bytesPerSecond
            }
            profile.screens = try fields.field(.screens, expected: "a whole number") ?? profile.screens
            profile.backingStoreBytes = try fields.size(.backingStore) ?? profile.backingStoreBytes
            profile.launchBytes = try fields.size(.launch) ?? profile.launchBytes
            try fields.object(.workingSet, GrowthKeys.self) { workingSet in
                profile.workingSet.bytesPerSecond = try workingSet.size(.growth) ?? profile.workingSet.bytesPerSecond
                profile.workingSet.limitBytes = try workingSet.size(.limit) ?? profile.workingSet.limitBytes
            }
            profile.keptOnWarning = try fields.field(.keptOnWarning, expected: "a number") ?? profile.keptOnWarning
            profile.fetchBytes = try fields.size(.fetch) ?? profile.fetchBytes
            if fields.contains(.playback), try fields.decodeNil(forKey: .playback) {
                profile.playback = nil
            }
            try fields.object(.playback, PlaybackKeys.self) { playback in
                let given = profile.playback ?? AppProfile.music.playback
                profile.playback = AppProfile.Playback(
                    bufferBytes: try playback.size(.buffer) ?? given?.bufferBytes ?? 0,
                    backgroundLength: try playback.duration(.backgroundLength) ?? given?.backgroundLength ?? .zero
                )
            }
            try decoder.rejectUnknownKeys(Keys.allCases)
            self.profile = profile
        }
    }
}
