import MemoryPressure
@testable import MemoryPressureSimulation
import Testing

struct SimulationPlanTests {
    @Test func theSameSeedMakesTheSameDecisions() {
        for scenario in Scenario.builtIn {
            let first = SimulationPlan(scenario: scenario)
            let second = SimulationPlan(scenario: scenario)
            #expect(first == second)
            #expect(first.digest == second.digest)
            #expect(first.actions.count > 3)
        }
    }

    @Test func anotherSeedMakesOtherDecisions() {
        var reseeded = Scenario.standard
        reseeded.seed = 2
        let original = SimulationPlan(scenario: .standard)
        let other = SimulationPlan(scenario: reseeded)
        #expect(original.actions != other.actions)
        #expect(original.digest != other.digest)
    }

    @Test func plansOpenTheFirstAppThenStayInTimeOrderWithinTheSession() {
        for scenario in Scenario.builtIn {
            let actions = SimulationPlan(scenario: scenario).actions
            #expect(actions.first == PlannedAction(time: .zero, kind: .open(scenario.apps[0].name)))
            #expect(zip(actions, actions.dropFirst()).allSatisfy { $0.time <= $1.time })
            #expect(actions.allSatisfy { $0.time <= scenario.duration })
            let names = Set(scenario.apps.map(\.name))
            for action in actions {
                switch action.kind {
                case .open(let app), .backgroundLaunch(let app, _): #expect(names.contains(app))
                default: break
                }
            }
        }
    }

    @Test func interruptionsAndSpikesEndAfterTheyBeginAndNeverOverlapThemselves() {
        for scenario in Scenario.builtIn {
            var interrupted = false
            var spiking = false
            for action in SimulationPlan(scenario: scenario).actions {
                switch action.kind {
                case .beginInterruption: #expect(!interrupted); interrupted = true
                case .endInterruption: #expect(interrupted); interrupted = false
                case .beginSpike(let bytes):
                    #expect(!spiking)
                    #expect(scenario.randomActivity!.spikeBytes.contains(bytes))
                    spiking = true
                case .endSpike: #expect(spiking); spiking = false
                default: break
                }
            }
        }
    }

    @Test func scheduledEventsAreMergedInTimeOrderWithTheirEnds() throws {
        let scenario = try parseScenario("""
            { "budget": "768MiB", "duration": "10s", "apps": ["maps", "photos", "music"],
              "events": [
                { "at": "6s", "kind": "spike", "size": "32MiB", "hold": "1s" },
                { "at": "2s", "kind": "open", "app": "photos" },
                { "at": "3s", "kind": "interruption", "length": "500ms" },
                { "at": "4s", "kind": "backgroundLaunch", "app": "music", "work": "2s" },
                { "at": "9500ms", "kind": "spike", "size": "32MiB", "hold": "5s" }
              ] }
            """)
        let plan = SimulationPlan(scenario: scenario)
        #expect(plan.actions.map(\.description) == [
            "0ms open maps", "2000ms open photos", "3000ms interruption begins", "3500ms interruption ends",
            "4000ms background launch music for 2s", "6000ms spike of 33554432 bytes begins", "7000ms spike ends",
            "9500ms spike of 33554432 bytes begins",
        ])
    }
}

struct SeededGeneratorTests {
    @Test func aSeedGivesTheSameNumbersOnEveryMachine() {
        // xoshiro256** seeded by SplitMix64: fixed values, so a change of algorithm is caught.
        var generator = SeededGenerator(seed: 42)
        let values = (0 ..< 3).map { _ in generator.next() }
        var again = SeededGenerator(seed: 42)
        #expect(values == (0 ..< 3).map { _ in again.next() })
        #expect(values == SeededGeneratorTests.seed42)
    }

    /// The first outputs for seed 42, from an independent implementation of the reference
    /// algorithms (xoshiro256** 1.0 and SplitMix64).
    static let seed42: [UInt64] = [0x1578_0b2e_0c2e_c716, 0x6104_d986_6d11_3a7e, 0xae17_5332_39e4_99a1]

    @Test func streamsOfOneSeedDiffer() {
        var first = SeededGenerator(seed: 7, stream: 1)
        var second = SeededGenerator(seed: 7, stream: 2)
        #expect((0 ..< 4).map { _ in first.next() } != (0 ..< 4).map { _ in second.next() })
    }

    @Test func drawsStayInTheirRanges() {
        var generator = SeededGenerator(seed: 3)
        for _ in 0 ..< 10_000 {
            #expect((5 ... 9).contains(generator.uniform(in: 5 ... 9)))
            let unit = generator.unitInterval()
            #expect(unit >= 0 && unit < 1)
            #expect(generator.exponential(mean: 2) >= 0)
        }
        #expect(generator.weightedIndex([0, 0]) == nil)
        #expect(generator.weightedIndex([0, 5, 0]) == 1)
    }

    @Test func uniformDrawsReachEveryValue() {
        var generator = SeededGenerator(seed: 11)
        var seen = Set<Int>()
        for _ in 0 ..< 1000 { seen.insert(generator.uniform(in: 0 ... 9)) }
        #expect(seen == Set(0 ... 9))
    }
}
