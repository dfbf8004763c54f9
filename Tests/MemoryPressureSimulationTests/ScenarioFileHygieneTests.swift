import Foundation
import MemoryPressure
@testable import MemoryPressureSimulation
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// Issue 18, item 11: hostile scenario files. Each ends in a one-line error that echoes what was
/// given escaped and cut.
struct ScenarioFileHygieneTests {
    /// The message `json` is rejected with, as `scenario file test.json` would be.
    private func message(_ json: String) -> String? {
        message(Array(json.utf8))
    }

    private func message(_ bytes: [UInt8]) -> String? {
        do {
            _ = try ScenarioFile.parse(bytes, source: "scenario file test.json", defaultName: "test", limits: eightGiBMachine)
            return nil
        } catch {
            #expect(error.code == .invalidScenario)
            #expect(!error.description.contains("\n") && printsSafelyOnATerminal(error.description), "\(error)")
            return error.description
        }
    }

    @Test func controlAndBidirectionalCharactersInNamesAndKeysAreEscaped() {
        let key = message(#"{ "budget": "768MiB", "apps": ["photos"], "\u001b[2J\u001b]0;pwned\u0007": 1 }"#)
        #expect(key == #"scenario file test.json: \u{1B}[2J\u{1B}]0;pwned\u{7} is not a known key; expected one of apps, budget, duration, events, name, profiles, random, seed, summary"#)
        let profile = message(#"{ "budget": "768MiB", "apps": ["\u202egnp\u2066"] }"#)
        #expect(profile == #"scenario file test.json: apps[0] "\u{202E}gnp\u{2066}" is not a known profile; expected one of photos, music, maps, browser, utility, game or a name under "profiles""#)
        let nested = message(#"{ "budget": "768MiB", "apps": ["maps"], "profiles": { "x\u200f": { "base": "maps", "\u009b31m": 0 } } }"#)
        #expect(nested == #"scenario file test.json: profiles.x\u{200F}.\u{9B}31m is not a known key; expected one of backingStore, base, cache, fetch, keptOnWarning, launch, playback, screens, workingSet"#)
        let name = message(#"{ "name": "\u001b[31mred", "budget": "768MiB", "apps": ["maps"], "events": [{ "at": "1s", "kind": "open", "app": "a\u202e" }] }"#)
        #expect(name == #"scenario file test.json: events[0].app "a\u{202E}" is not an app of the scenario; expected one of maps"#)
    }

    @Test func aLongValueIsEchoedCutWithItsLength() {
        let long = String(repeating: "x", count: 1_000_000)
        let cut = "\"" + String(repeating: "x", count: 80) + "\"… (1000000 bytes)"
        let shown = message(#"{ "budget": ""# + long + #"", "apps": ["maps"] }"#)
        #expect(shown?.hasPrefix("scenario file test.json: budget size \(cut) is not valid; expected") == true)
        #expect((shown?.count ?? .max) < 500)
        let key = message(#"{ "budget": "768MiB", "apps": ["maps"], ""# + long + #"": 1 }"#)
        #expect(key?.hasPrefix("scenario file test.json: " + String(repeating: "x", count: 40) + "… is not a known key") == true)
        #expect((key?.count ?? .max) < 500)
        #expect {
            _ = try ScenarioOverrides(duration: long).apply(to: .standard, limits: eightGiBMachine)
        } throws: { error in
            "\(error)" == "duration: \(cut) is not a duration; expected a number and a unit (ms, s, m, h), such as 20s"
        }
    }
}
