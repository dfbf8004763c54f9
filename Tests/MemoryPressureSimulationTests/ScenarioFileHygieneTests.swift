import Foundation
import MemoryPressure
@testable import MemoryPressureSimulation
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import SystemPackage
import Testing

/// Issue 18, item 11: hostile scenario files. Each ends in a one-line error that says what is
/// actually wrong, echoes what was given escaped and cut, and never waits on what is not a file.
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

    @Test func aKeyGivenTwiceIsRejectedNamingItsPath() {
        #expect(message(#"{ "budget": "768MiB", "apps": ["photos"], "budget": "1GiB" }"#)
            == "scenario file test.json: budget is given twice (at line 1, column 3 and line 1, column 43); expected each key at most once in an object")
        #expect(message("""
            { "budget": "768MiB", "apps": ["maps"],
              "profiles": { "big": { "base": "maps",
                                     "cache": { "limit": "1MiB", "limit": "2MiB" } } } }
            """)
            == "scenario file test.json: profiles.big.cache.limit is given twice (at line 3, column 37 and line 3, column 54); expected each key at most once in an object")
        #expect(message(#"{ "budget": "768MiB", "apps": [{ "name": "a", "profile": "maps", "name": "b" }] }"#)?
            .hasPrefix("scenario file test.json: apps[0].name is given twice") == true)
        // The decoder compares keys as Swift strings: NFC and NFD spellings are one key.
        #expect(message("{ \"budget\": \"768MiB\", \"apps\": [\"maps\"], \"profiles\": { \"caf\u{E9}\": { \"base\": \"maps\" }, \"cafe\u{301}\": { \"base\": \"music\" } } }")?
            .hasPrefix("scenario file test.json: profiles.cafe\u{301} is given twice") == true)
        // An escaped spelling of a key is the same key.
        #expect(message(#"{ "budget": "768MiB", "apps": ["maps"], "\u0062udget": "1GiB" }"#)?
            .hasPrefix("scenario file test.json: budget is given twice") == true)
    }

    @Test func deepNestingIsNamedAsSuch() {
        let deep = #"{ "budget": "768MiB", "apps": ["maps"], "x": "# + String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000) + "}"
        #expect(message(deep) == "scenario file test.json: nests arrays and objects deeper than 32 levels (the limit) at line 1, column 77; expected at most 32 levels (a scenario needs 5)")
        // Thirty-two levels are read (and the extra key is then reported as such).
        let deepest = #"{ "budget": "768MiB", "apps": ["maps"], "x": "# + String(repeating: "[", count: 31) + String(repeating: "]", count: 31) + "}"
        #expect(message(deepest) == "scenario file test.json: x is not a known key; expected one of apps, budget, duration, events, name, profiles, random, seed, summary")
    }

    @Test(arguments: [
        (#"{ "budget": "768MiB", "apps": ["maps"], "seed": 1e400 }"#, "seed 1e400 is out of range"),
        (#"{ "budget": "768MiB", "apps": ["maps"], "duration": -1e400 }"#, "duration -1e400 is out of range"),
        (#"{ "budget": "768MiB", "apps": ["maps"], "random": { "weights": { "open": 1e-400 } } }"#, "random.weights.open 1e-400 is out of range"),
        (#"{ "budget": 1e309, "apps": ["maps"] }"#, "budget 1e309 is out of range"),
    ])
    func aNumberNoDoubleHoldsIsOutOfRangeNotInvalidJSON(_ json: String, _ expected: String) {
        #expect(message(json) == "scenario file test.json: \(expected); expected a number of magnitude at most 1.7976931348623157e+308, and 0 or at least 5e-324")
    }

    @Test(arguments: [
        ("{ \"budget\": \"768MiB\",\n  \"apps\": [\"maps\"] \"seed\": 1 }", #"at line 2, column 20: found '"'; expected ',' or '}'"#),
        (#"{ "budget": "768MiB", "apps": ["maps"], }"#, "at line 1, column 41: found '}'; expected a key in double quotes"),
        (#"{ "budget": "768MiB", "apps": ["maps"] "#, "at line 1, column 40: found the end of the file; expected ',' or '}'"),
        ("{ \"name\": \"\u{1B}[31m\" }", "at line 1, column 12: found the control character U+001B inside a string; expected it escaped, as \\u001B"),
        (#"{ "name": "\ud800x" }"#, #"at line 1, column 12: found the unpaired high surrogate \uD800; expected a low surrogate (\uDC00 to \uDFFF) after it"#),
        (#"{ "name": "\q" }"#, #"at line 1, column 13: found 'q'; expected an escape"#),
        (#"{ "seed": 01 }"#, "at line 1, column 12: found '1'; expected ',' or '}'"),
        (#"{ "seed": NaN }"#, "at line 1, column 11: found 'N'; expected a value"),
        ("{ \"seed\": 1 }\u{202E}", #"at line 1, column 14: found '\u{202E}'; expected the end of the file after the scenario's object"#),
        ("{ \"name\": \"é\", \"x\": tru }", "at line 1, column 24: found ' '; expected true"),
    ])
    func brokenSyntaxIsPlacedByLineAndColumn(_ json: String, _ expected: String) {
        let shown = message(json)
        #expect(shown?.hasPrefix("scenario file test.json: is not valid JSON " + expected) == true, "\(shown ?? "accepted")")
    }

    @Test func bytesThatAreNotUTF8AndAnEmptyFileAreNamed() {
        #expect(message(Array(#"{ "name": ""#.utf8) + [0xFF] + Array(#"" }"#.utf8))
            == "scenario file test.json: is not valid JSON at line 1, column 12: found the byte 0xFF, which is not UTF-8; expected text in UTF-8")
        #expect(message(" \n ") == "scenario file test.json: is empty; expected a JSON object describing a scenario")
        // A byte order mark is skipped, as JSONDecoder skips it.
        #expect(message([0xEF, 0xBB, 0xBF] + Array(#"{ "budget": "768MiB", "apps": ["maps"] }"#.utf8)) == nil)
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

    @Test func aFIFOADeviceAndADirectoryAreRefusedWithoutWaiting() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.path.appending("trip.json")
        #expect(mkfifo(fifo.string, 0o644) == 0)
        try directory.makeDirectory("folder.json")
        let cases: [(FilePath, String)] = [
            (fifo, "is a FIFO"), ("/dev/null", "is a character device"), (directory.path.appending("folder.json"), "is a directory"),
        ]
        for (path, kind) in cases {
            #expect(loadWithoutHanging(path, fifo: fifo) == "scenario file \(path): \(kind); expected a regular file")
        }
    }

    /// The error loading `path` gives. Opening a FIFO for reading waits for a writer: should the
    /// load wait, a writer is opened after 30 s to release it, and the test fails.
    private func loadWithoutHanging(_ path: FilePath, fifo: FilePath) -> String {
        let outcome = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do throws(SimulationError) {
                _ = try ScenarioFile.load(path, limits: eightGiBMachine)
                outcome.withLock { $0 = "loaded" }
            } catch {
                outcome.withLock { $0 = error.code == .unreadableScenarioFile ? error.description : "\(error.code): \(error)" }
            }
            done.signal()
        }
        if done.wait(timeout: .now() + 30) == .timedOut {
            Issue.record("loading \(path) waited")
            let writer = open(fifo.string, O_WRONLY | O_NONBLOCK)
            done.wait()
            if writer >= 0 { close(writer) }
        }
        return outcome.withLock { $0 } ?? "no outcome"
    }
}
