import MemoryPressure

extension ScenarioFile {
    /// What the user of a scenario file does at random: the default scenario's figures, changed
    /// where the file gives them. Weights left out of a file's "weights" are 0.
    struct Random: Decodable {
        private enum Keys: String, CodingKey, CaseIterable { case meanGap, weights, interruptionLength, backgroundWork, spikeSize, spikeHold }

        private enum WeightKeys: String, CodingKey, CaseIterable { case open, home, interruption, backgroundLaunch, spike }

        let activity: RandomActivity

        init(from decoder: any Decoder) throws {
            let fields = try decoder.object(Keys.self)
            var activity = Scenario.standard.randomActivity!
            try fields.object(.weights, WeightKeys.self) { weights in
                func weight(_ key: WeightKeys) throws -> Double { try weights.field(key, expected: "a number") ?? 0 }
                activity.weights = RandomActivity.Weights(
                    open: try weight(.open), home: try weight(.home), interruption: try weight(.interruption),
                    backgroundLaunch: try weight(.backgroundLaunch), spike: try weight(.spike)
                )
            }
            activity.meanGap = try fields.duration(.meanGap) ?? activity.meanGap
            activity.interruptionLength = try fields.range(.interruptionLength, of: Span.self) ?? activity.interruptionLength
            activity.backgroundWork = try fields.range(.backgroundWork, of: Span.self) ?? activity.backgroundWork
            activity.spikeBytes = try fields.range(.spikeSize, of: Size.self) ?? activity.spikeBytes
            activity.spikeHold = try fields.range(.spikeHold, of: Span.self) ?? activity.spikeHold
            try decoder.rejectUnknownKeys(Keys.allCases)
            self.activity = activity
        }
    }

    /// Something the user of a scenario file does at a set time: `at`, a `kind` (the kinds of
    /// random decision), and the figures of that kind.
    struct Event: Decodable {
        private enum Keys: String, CodingKey { case at, kind, app, length, work, size, hold }

        let event: ScenarioEvent

        init(from decoder: any Decoder) throws {
            let fields = try decoder.object(Keys.self)
            let time = try fields.required(try fields.duration(.at), .at, expected: "the time from the start, such as \"5s\"")
            let kinds = "one of \(RandomActivity.Kind.allCases.map(\.rawValue).joined(separator: ", "))"
            let kind: RandomActivity.Kind = try fields.required(try fields.choice(.kind, "a kind of event", expected: kinds), .kind, expected: kinds)
            func app() throws -> AppIdentifier {
                let name: String? = try fields.field(.app, expected: "the name of an app")
                return try AppIdentifier(try fields.required(name, .app, expected: "the name of an app"), at: fields.codingPath + [Keys.app])
            }
            func duration(_ key: Keys) throws -> Duration {
                try fields.required(try fields.duration(key), key, expected: "a duration")
            }
            let action: ScenarioEvent.Action
            let keys: [Keys]
            switch kind {
            case .open:
                (action, keys) = (.open(try app()), [.app])
            case .home:
                (action, keys) = (.home, [])
            case .interruption:
                (action, keys) = (.interruption(length: try duration(.length)), [.length])
            case .backgroundLaunch:
                let launched = try app()
                (action, keys) = (.backgroundLaunch(launched, work: try duration(.work)), [.app, .work])
            case .spike:
                let bytes = try fields.required(try fields.size(.size), .size, expected: "a size")
                (action, keys) = (.spike(bytes: bytes, hold: try duration(.hold)), [.size, .hold])
            }
            try decoder.rejectUnknownKeys([.at, .kind] + keys)
            event = ScenarioEvent(time: time, action: action)
        }
    }
}
