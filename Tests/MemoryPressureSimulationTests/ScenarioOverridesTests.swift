import MemoryPressure
@testable import MemoryPressureSimulation
import Testing

struct ScenarioOverridesTests {
    @Test func overridesChangeTheBudgetDurationSeedAndApps() throws {
        let overrides = ScenarioOverrides(budget: "1GiB", appCount: 3, duration: "5s", seed: 42)
        let scenario = try overrides.apply(to: .standard, limits: eightGiBMachine)
        #expect(scenario.budgetBytes == 1 << 30)
        #expect(scenario.duration == .seconds(5))
        #expect(scenario.seed == 42)
        #expect(scenario.apps.map(\.name.rawValue) == ["photos", "music", "maps"])
    }

    @Test func moreAppsThanTheScenarioHasAreCopiesOfItsAppsInTurn() throws {
        let scenario = try ScenarioOverrides(appCount: 11).apply(to: .standard, limits: eightGiBMachine)
        #expect(scenario.apps.count == 11)
        #expect(scenario.apps.suffix(3).map(\.name.rawValue) == ["photos-2", "music-2", "maps-2"])
        #expect(scenario.apps[8].profile == .photos)
        #expect(Set(scenario.apps.map(\.name)).count == 11)
    }

    /// Issue 18, item 1: a name too long to take a suffix (254 bytes, or 255 in two-byte scalars)
    /// used to make the copying loop forever. Copies are cut to fit, at a scalar, and stay distinct.
    @Test(.timeLimit(.minutes(1)), arguments: [
        String(repeating: "a", count: 254), String(repeating: "é", count: 127) + "a", String(repeating: "a", count: 253) + "-2",
    ])
    func copiesOfAnAppWithAMaximalNameEndPromptly(_ name: String) throws {
        let scenario = try parseScenario(#"{ "budget": "1GiB", "apps": [{ "name": "\#(name)", "profile": "utility" }, { "name": "photos-2", "profile": "photos" }] }"#)
        let start = ContinuousClock.now
        for count in [2, 3, 64] {
            let resized = try ScenarioOverrides(appCount: count).apply(to: scenario, limits: eightGiBMachine)
            #expect(resized.apps.count == count)
            #expect(Set(resized.apps.map(\.name)).count == count, "copies must have distinct names")
            #expect(resized.apps.allSatisfy { $0.name.rawValue.utf8.count <= AppIdentifier.maximumByteCount })
            if count >= 3 {
                let copy = resized.apps[2].name.rawValue
                let numbered = String(copy.unicodeScalars.reversed().drop { $0 == "x" }.reversed().map(Character.init))
                #expect(numbered.hasSuffix("-2") && name.unicodeScalars.starts(with: numbered.unicodeScalars.dropLast(2)), "copy \(copy.debugDescription)")
            }
        }
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    /// Bad command-line values, and a part of the one-line message each must give.
    @Test(arguments: [
        (ScenarioOverrides(appCount: 0), "apps: 0 apps is out of range; expected 1 to 64 apps"),
        (ScenarioOverrides(appCount: 65), "apps: 65 apps is out of range; expected 1 to 64 apps"),
        (ScenarioOverrides(duration: "-5s"), #"duration: "-5s" is negative; expected 1s to 1h"#),
        (ScenarioOverrides(duration: "0s"), "duration: 0s is out of range; expected 1s to 1h"),
        (ScenarioOverrides(duration: "2h"), "duration: 2h is out of range; expected 1s to 1h"),
        (ScenarioOverrides(duration: "twenty"), #"duration: "twenty" is not a duration"#),
        (ScenarioOverrides(budget: "plenty"), #"budget: size "plenty" is not valid; expected a whole number of bytes (optionally with B), or a number with a unit"#),
        (ScenarioOverrides(budget: "1.9"), #"budget: size "1.9" is not a whole number of bytes; expected a whole number of bytes (optionally with B), or a number with a unit"#),
        (ScenarioOverrides(budget: "100MiB"), #"budget: 100 MiB is too small for scenario "default""#),
        (ScenarioOverrides(budget: "-1GiB"), "budget: -1073741824 bytes is not positive"),
        (ScenarioOverrides(budget: "1TiB"), "budget: 1 TiB exceeds the machine's physical memory of 8 GiB; expected"),
    ])
    func rejectsBadValuesInOneLineNamingTheSetting(_ overrides: ScenarioOverrides, _ expected: String) {
        #expect {
            _ = try overrides.apply(to: .standard, limits: eightGiBMachine)
        } throws: { error in
            let message = "\(error)"
            if !message.hasPrefix(expected) { Issue.record("message was: \(message)") }
            return message.hasPrefix(expected) && !message.contains("\n") && (error as? SimulationError)?.code == .invalidScenario
        }
    }

    @Test func aBudgetOverTheCgroupsMaximumNamesThatLimit() {
        let limits = MemoryLimits(physicalBytes: 8 << 30, controlGroupMaximum: 1 << 30)
        #expect {
            _ = try ScenarioOverrides(budget: "2GiB").apply(to: .standard, limits: limits)
        } throws: { error in
            "\(error)".hasPrefix("budget: 2 GiB exceeds the cgroup's memory.max of 1 GiB; expected ") && "\(error)".hasSuffix(" to 1 GiB")
        }
    }

    @Test func errorsNameTheSettingAsTheCallerLabelsIt() {
        #expect {
            _ = try ScenarioOverrides(appCount: 0).apply(to: .standard, limits: eightGiBMachine) { "--\($0.rawValue)" }
        } throws: { error in
            "\(error)" == "--apps: 0 apps is out of range; expected 1 to 64 apps"
        }
    }

    @Test func theMinimumBudgetCoversTheLargestAppAndSpikeUnderTheTarget() {
        let scenario = Scenario.standard
        let largest = scenario.apps.map(\.profile.unpurgeableBytes).max()!
        let spike = scenario.randomActivity!.spikeBytes.upperBound
        #expect(scenario.minimumBudgetBytes >= Int(Double((64 << 20) + largest + spike) / 0.7))
        #expect(scenario.minimumBudgetBytes < scenario.budgetBytes)
    }

    @Test func everyBuiltInScenarioIsValidOnAMachineWithTwoGiBFree() throws {
        let twoGiB = MemoryLimits(physicalBytes: 2 << 30)
        for scenario in Scenario.builtIn {
            _ = try scenario.validated(source: "scenario \(scenario.name)", limits: twoGiB)
        }
        #expect(Scenario.builtIn.first?.name == "default")
        #expect(Set(Scenario.builtIn.map(\.name)).count == Scenario.builtIn.count)
    }

    @Test func anUnknownScenarioNameIsNeitherBuiltInNorAFile() {
        #expect {
            _ = try Scenario.resolve("marathon", limits: eightGiBMachine)
        } throws: { error in
            "\(error)" == #"scenario: "marathon" is neither a built-in scenario nor a file; expected one of default, switching, spikes, background, quick, stampede or the path of a JSON scenario file"#
                && (error as? SimulationError)?.code == .unknownScenario
        }
    }
}
