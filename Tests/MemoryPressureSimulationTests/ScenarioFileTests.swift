import Foundation
import MemoryPressure
@testable import MemoryPressureSimulation
import MemoryPressureTestKit
import Testing

struct ScenarioFileTests {
    @Test func readsEveryPartOfAScenarioFile() throws {
        let scenario = try parseScenario("""
            {
              "name": "commute",
              "summary": "On the train.",
              "budget": "1GiB",
              "duration": "30s",
              "seed": 18446744073709551615,
              "profiles": {
                "gallery": { "base": "photos", "cache": { "kind": "media", "entrySize": ["1MiB", "3MiB"], "limit": "96MiB", "growth": "40MiB" },
                             "screens": 3, "backingStore": 1048576, "launch": "32MiB", "workingSet": { "growth": "8MiB", "limit": "64MiB" },
                             "keptOnWarning": 0.5, "fetch": "4MiB", "playback": { "buffer": "8MiB", "backgroundLength": 2.5 } },
                "silent": { "base": "music", "playback": null }
              },
              "apps": [ "maps", { "name": "gallery", "profile": "gallery" }, { "name": "radio", "profile": "silent" } ],
              "random": { "meanGap": "1.5s", "weights": { "open": 4, "spike": 1 }, "spikeSize": ["32MiB", "64MiB"], "spikeHold": "1s" },
              "events": [
                { "at": "10s", "kind": "interruption", "length": "2s" },
                { "at": "12s", "kind": "backgroundLaunch", "app": "radio", "work": "3s" },
                { "at": "14s", "kind": "spike", "size": "64MiB", "hold": "500ms" },
                { "at": "15s", "kind": "open", "app": "gallery" },
                { "at": "20s", "kind": "home" }
              ]
            }
            """)
        #expect(scenario.name == "commute")
        #expect(scenario.summary == "On the train.")
        #expect(scenario.budgetBytes == 1 << 30)
        #expect(scenario.duration == .seconds(30))
        #expect(scenario.seed == .max)
        #expect(scenario.apps.map(\.name.rawValue) == ["maps", "gallery", "radio"])
        let gallery = scenario.apps[1].profile
        #expect(gallery.name == "gallery")
        #expect(gallery.cache == .init(kind: .media, entryBytes: mebibyte ... 3 * mebibyte, limitBytes: 96 * mebibyte, bytesPerSecond: 40 * mebibyte))
        #expect(gallery.screens == 3 && gallery.backingStoreBytes == mebibyte && gallery.launchBytes == 32 * mebibyte)
        #expect(gallery.workingSet == .init(bytesPerSecond: 8 * mebibyte, limitBytes: 64 * mebibyte))
        #expect(gallery.keptOnWarning == 0.5 && gallery.fetchBytes == 4 * mebibyte)
        #expect(gallery.playback == .init(bufferBytes: 8 * mebibyte, backgroundLength: .milliseconds(2500)))
        #expect(scenario.apps[2].profile.playback == nil)
        #expect(scenario.apps[0].profile == .maps)
        let random = try #require(scenario.randomActivity)
        #expect(random.meanGap == .milliseconds(1500))
        #expect(random.weights == .init(open: 4, home: 0, interruption: 0, backgroundLaunch: 0, spike: 1))
        #expect(random.spikeBytes == 32 * mebibyte ... 64 * mebibyte)
        #expect(random.spikeHold == .seconds(1) ... .seconds(1))
        #expect(random.interruptionLength == Scenario.standard.randomActivity?.interruptionLength)
        #expect(scenario.events == [
            ScenarioEvent(time: .seconds(10), action: .interruption(length: .seconds(2))),
            ScenarioEvent(time: .seconds(12), action: .backgroundLaunch(.test("radio"), work: .seconds(3))),
            ScenarioEvent(time: .seconds(14), action: .spike(bytes: 64 * mebibyte, hold: .milliseconds(500))),
            ScenarioEvent(time: .seconds(15), action: .open(.test("gallery"))),
            ScenarioEvent(time: .seconds(20), action: .home),
        ])
    }

    /// The scenario file of issue 15's case, kept beside the tests for `mempressure run --scenario`.
    @Test func theEightLaunchesFileIsTheIssuesCase() throws {
        let path = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Scenarios/eight-launches.json").path
        let scenario = try ScenarioFile.load(.init(path), limits: eightGiBMachine)
        #expect(scenario.name == "eight-launches")
        #expect(scenario.budgetBytes == 900 * mebibyte)
        #expect(scenario.apps.count == 8)
        #expect(scenario.apps.allSatisfy { $0.profile.launchBytes == 512 * mebibyte })
        let launches = scenario.events.filter { if case .backgroundLaunch = $0.action { true } else { false } }
        #expect(launches.count == 7 && Set(launches.map(\.time)).count == 1, "seven launched into the background at once")
    }

    @Test func aMinimalFileTakesItsNameFromTheFileAndDefaultsTheRest() throws {
        let scenario = try parseScenario(#"{ "budget": "768MiB", "apps": ["photos", "maps"] }"#)
        #expect(scenario.name == "test")
        #expect(scenario.duration == .seconds(20))
        #expect(scenario.seed == 1)
        #expect(scenario.randomActivity == nil)
        #expect(scenario.events.isEmpty)
    }

    /// Bad files, and a part of the one-line message each must give.
    @Test(arguments: [
        ("{ \"budget\": ", "is not valid JSON"),
        ("[1, 2]", "scenario file test.json: is an array; expected an object"),
        (#"{ "apps": ["photos"] }"#, "budget is missing; expected a size"),
        (#"{ "budget": "768MiB" }"#, "apps is missing; expected an array of apps"),
        (#"{ "budget": "768MiB", "apps": ["photos"], "colour": "red" }"#, "colour is not a known key; expected one of"),
        (#"{ "budget": "lots", "apps": ["photos"] }"#, #"budget size "lots" is not valid; expected a whole number of bytes (optionally with B), or a number with a unit"#),
        (#"{ "budget": -5, "apps": ["photos"] }"#, "budget -5 is negative"),
        (#"{ "budget": "20MiB", "apps": ["photos"] }"#, "budget 20 MiB is too small for scenario \"test\""),
        (#"{ "budget": "64GiB", "apps": ["photos"] }"#, "budget 64 GiB exceeds the machine's physical memory of 8 GiB; expected"),
        (#"{ "budget": "768MiB", "duration": "-5s", "apps": ["photos"] }"#, #"duration "-5s" is negative; expected 1s to 1h"#),
        (#"{ "budget": "768MiB", "duration": "0s", "apps": ["photos"] }"#, "duration 0s is out of range; expected 1s to 1h"),
        (#"{ "budget": "768MiB", "duration": "soon", "apps": ["photos"] }"#, #"duration "soon" is not a duration"#),
        (#"{ "budget": "768MiB", "seed": -1, "apps": ["photos"] }"#, "seed is the number -1; expected a whole number from 0"),
        (#"{ "budget": "768MiB", "apps": [] }"#, "apps 0 apps is out of range; expected 1 to 64 apps"),
        (#"{ "budget": "768MiB", "apps": ["camera"] }"#, #"apps[0] "camera" is not a known profile; expected one of photos, music, maps, browser, utility"#),
        (#"{ "budget": "768MiB", "apps": [{ "name": "a" }] }"#, "apps[0].profile is missing"),
        (#"{ "budget": "768MiB", "apps": [{ "name": "a/b", "profile": "maps" }] }"#, #"apps[0].name "a/b" is not a usable app name"#),
        (#"{ "budget": "768MiB", "apps": ["maps", "maps"] }"#, #"apps[1].name "maps" is used twice"#),
        (#"{ "budget": "768MiB", "apps": [7] }"#, "apps[0] is the number 7; expected an object"),
        (#"{ "budget": "768MiB", "profiles": { "photos": { "base": "maps" } }, "apps": ["maps"] }"#, "profiles.photos redefines a built-in profile"),
        (#"{ "budget": "768MiB", "profiles": { "big": { "base": "tank" } }, "apps": ["maps"] }"#, #"profiles.big.base "tank" is not a built-in profile"#),
        (#"{ "budget": "768MiB", "profiles": { "big": { "base": "maps", "cache": { "kind": "jpeg" } } }, "apps": [{ "name": "b", "profile": "big" }] }"#, #"profiles.big.cache.kind "jpeg" is not a cache kind; expected one of images, media, rebuildableObjects"#),
        (#"{ "budget": "768MiB", "profiles": { "big": { "base": "maps", "cache": { "entrySize": ["8MiB", "1MiB"] } } }, "apps": [{ "name": "b", "profile": "big" }] }"#, "profiles.big.cache.entrySize [8 MiB, 1 MiB] is in the wrong order"),
        (#"{ "budget": "768MiB", "profiles": { "big": { "base": "maps", "cache": { "entrySize": "1KiB" } } }, "apps": [{ "name": "b", "profile": "big" }] }"#, "profiles.big.cache.entrySize 1 KiB is out of range; expected 4 KiB to 256 MiB"),
        (#"{ "budget": "768MiB", "profiles": { "big": { "base": "maps", "screens": 100 } }, "apps": [{ "name": "b", "profile": "big" }] }"#, "profiles.big.screens 100 is out of range; expected 0 to 64"),
        (#"{ "budget": "768MiB", "profiles": { "big": { "base": "maps", "keptOnWarning": 1.5 } }, "apps": [{ "name": "b", "profile": "big" }] }"#, "profiles.big.keptOnWarning 1.5 is out of range; expected 0.0 to 1.0"),
        (#"{ "budget": "768MiB", "profiles": { "big": { "base": "maps", "wheels": 4 } }, "apps": [{ "name": "b", "profile": "big" }] }"#, "profiles.big.wheels is not a known key"),
        (#"{ "budget": "768MiB", "apps": ["maps"], "random": { "weights": { "open": 0 } } }"#, "random.weights has no positive weight"),
        (#"{ "budget": "768MiB", "apps": ["maps"], "random": { "meanGap": "1ms" } }"#, "random.meanGap 1ms is out of range; expected 50ms to 1h"),
        (#"{ "budget": "768MiB", "apps": ["maps"], "random": { "spikeSize": ["1MiB", "2MiB", "3MiB"] } }"#, "random.spikeSize has 3 elements; expected [low, high]"),
        (#"{ "budget": "768MiB", "apps": ["maps"], "events": [{ "at": "1s", "kind": "open", "app": "photos" }] }"#, #"events[0].app "photos" is not an app of the scenario; expected one of maps"#),
        (#"{ "budget": "768MiB", "apps": ["maps"], "events": [{ "at": "30s", "kind": "home" }] }"#, "events[0].at 30s is out of range; expected 0s to 20s"),
        (#"{ "budget": "768MiB", "apps": ["maps"], "events": [{ "at": "1s", "kind": "dance" }] }"#, #"events[0].kind "dance" is not a kind of event; expected one of open, home"#),
        (#"{ "budget": "768MiB", "apps": ["maps"], "events": [{ "at": "1s", "kind": "spike", "size": "64MiB" }] }"#, "events[0].hold is missing; expected a duration"),
        (#"{ "budget": "768MiB", "apps": ["maps"], "events": [{ "at": "1s", "kind": "home", "app": "maps" }] }"#, "events[0].app is not a known key; expected one of at, kind"),
        (#"{ "budget": "768MiB", "apps": ["maps"], "events": [{ "kind": "home" }] }"#, "events[0].at is missing"),
        // Numbers that do not fit, which JSONDecoder reports with an error of its own.
        (#"{ "budget": "768MiB", "seed": 1.5, "apps": ["photos"] }"#, "seed is the number 1.5; expected a whole number from 0"),
        (#"{ "budget": "768MiB", "profiles": { "big": { "base": "maps", "screens": 1e20 } }, "apps": ["maps"] }"#, "profiles.big.screens is the number 1e+20; expected a whole number"),
        (#"{ "budget": 18446744073709551615, "apps": ["maps"] }"#, "budget is the number 18446744073709551615; expected a size such as \"64MiB\""),
        (#"{ "budget": "768MiB", "apps": ["maps"], "random": { "spikeSize": [null, "1MiB"] } }"#, "random.spikeSize[0] is null; expected a size such as \"64MiB\""),
        (#"{ "budget": "768MiB", "apps": ["maps"], "random": { "weights": { "open": 1, "jump": 2 } } }"#, "random.weights.jump is not a known key; expected one of backgroundLaunch, home, interruption, open, spike"),
        (#"{ "budget": "768MiB", "profiles": { "big": { "base": "maps", "playback": { "loud": true } } }, "apps": ["maps"] }"#, "profiles.big.playback.loud is not a known key; expected one of backgroundLength, buffer"),
    ])
    func rejectsABadFileInOneLineNamingTheFieldAndWhatIsAccepted(_ json: String, _ expected: String) {
        #expect {
            _ = try parseScenario(json)
        } throws: { error in
            let message = "\(error)"
            let matches = message.contains(expected) && message.hasPrefix("scenario file test.json: ") && !message.contains("\n")
                && (error as? SimulationError)?.code == .invalidScenario
            if !matches { Issue.record("message was: \(message)") }
            return matches
        }
    }

    /// Every app is read (its shape and its name) before any profile is looked up, so a later app
    /// that is not an app at all is reported before an earlier unknown profile.
    @Test func everyAppIsReadBeforeAnyProfileIsLookedUp() {
        #expect {
            _ = try parseScenario(#"{ "budget": "768MiB", "apps": ["camera", 7] }"#)
        } throws: { error in
            "\(error)" == "scenario file test.json: apps[1] is the number 7; expected an object"
        }
    }

    @Test func aNullPlaybackRemovesTheBasesPlaybackAndAnEmptyOneKeepsIt() throws {
        let scenario = try parseScenario("""
            { "budget": "768MiB", "apps": [{ "name": "a", "profile": "quiet" }, { "name": "b", "profile": "same" }],
              "profiles": { "quiet": { "base": "music", "playback": null }, "same": { "base": "music", "playback": {} } } }
            """)
        #expect(scenario.apps[0].profile.playback == nil)
        #expect(scenario.apps[1].profile.playback == AppProfile.music.playback)
    }

    @Test func aFileLargerThanTheMaximumIsRejectedNamingTheLimit() throws {
        let directory = try TemporaryDirectory()
        try directory.write("huge.json", String(repeating: " ", count: ScenarioFile.maximumSize.bytes + 1))
        #expect {
            _ = try ScenarioFile.load(directory.path.appending("huge.json"), limits: eightGiBMachine)
        } throws: { error in
            "\(error)" == "scenario file \(directory.path)/huge.json: is larger than 16 MiB; expected a JSON file of at most 16 MiB"
                && (error as? SimulationError)?.code == .unreadableScenarioFile
        }
    }

    @Test func aFileThatCannotBeReadIsReportedWithItsPath() {
        #expect {
            _ = try ScenarioFile.load("/nonexistent/trip.json", limits: eightGiBMachine)
        } throws: { error in
            "\(error)".hasPrefix("scenario file /nonexistent/trip.json: cannot be read")
                && (error as? SimulationError)?.code == .unreadableScenarioFile
        }
    }
}
