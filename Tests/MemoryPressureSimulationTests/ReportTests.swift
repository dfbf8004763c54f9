import Foundation
import MemoryPressure
@testable import MemoryPressureSimulation
import Testing

/// The report's figures for a stampede: refused allocations and the ladder's reaction times, in
/// the JSON the tool writes.
struct ReportTests {
    @Test func theFirstRunOfEachEpisodeTimesTheReaction() {
        let start = ContinuousClock.now
        let at = { (milliseconds: Int) in start + .milliseconds(milliseconds) }
        var reactions = ReactionTimes()
        reactions.record(crossing: at(0), start: at(2))
        // Later runs of the same episode carry its crossing: they are not reactions.
        reactions.record(crossing: at(0), start: at(40))
        reactions.record(crossing: at(0), start: at(90))
        reactions.record(crossing: at(500), start: at(501))
        reactions.record(crossing: at(700), start: at(730))
        reactions.record(crossing: at(700), start: at(760))
        #expect(reactions.durations == [.milliseconds(2), .milliseconds(1), .milliseconds(30)])
    }

    @Test func latenciesAreSummarisedByNearestRank() {
        // Whole seconds, so that the milliseconds are exact.
        let latencies = SimulationReport.Latencies((1 ... 200).reversed().map { Duration.seconds($0) })
        #expect(latencies == .init(count: 200, p50: 100_000, p99: 198_000, max: 200_000))
        #expect(SimulationReport.Latencies([]) == .init(count: 0, p50: nil, p99: nil, max: nil))
    }

    @Test func theReportEncodesRefusedAllocationsAndReactionTimes() throws {
        var report = Self.report
        report.refusedAllocations = ["racer": 3, "chess": 1]
        report.refusedBytes = 700 << 20
        report.reactionMs = .init([.seconds(1), .seconds(2), .seconds(9)])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = try encoder.encode(report)
        let fields = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(fields["refusedAllocations"] as? [String: Int] == ["chess": 1, "racer": 3])
        #expect(fields["refusedBytes"] as? Int == 700 << 20)
        let reaction = try #require(fields["reactionMs"] as? [String: Any])
        #expect(reaction["count"] as? Int == 3)
        #expect(reaction["p50"] as? Double == 2000)
        #expect(reaction["p99"] as? Double == 9000)
        #expect(reaction["max"] as? Double == 9000)
        #expect(try JSONDecoder().decode(SimulationReport.self, from: json) == report)

        // No episode and no refusal: null figures and an empty object, not missing keys.
        let quiet = try #require(try JSONSerialization.jsonObject(with: try encoder.encode(Self.report)) as? [String: Any])
        #expect((quiet["refusedAllocations"] as? [String: Int])?.isEmpty == true)
        let none = try #require(quiet["reactionMs"] as? [String: Any])
        #expect(none["count"] as? Int == 0 && none["p50"] is NSNull && none["p99"] is NSNull && none["max"] is NSNull)
    }

    /// A report of a quiet run: nothing refused, no ladder run.
    static let report = SimulationReport(
        scenario: "stampede", seed: 1, manager: true, apps: 2, budgetBytes: 768 << 20, targetBytes: 537 << 20,
        warningThresholdBytes: 614 << 20, criticalThresholdBytes: 729 << 20, durationSeconds: 10, peakFootprintBytes: 500 << 20,
        timeOverBudgetSeconds: 0, timeOverBudgetFraction: 0, maxOvershootBytes: 0,
        levelChanges: .init(warning: 0, critical: 0),
        warningsDelivered: .init(warnings: 0, appDelegates: 0, viewControllers: 0, observers: 0),
        purges: .init(count: 0, bytes: 0), purgeLatencyMs: .init([]), reactionMs: .init([]),
        refusedAllocations: [:], refusedBytes: 0, terminations: [], relaunches: 0, restoredStates: 0, lostStates: 0,
        invariantViolations: [], appErrors: [], decisions: 3, decisionDigest: "0123456789abcdef", samples: 1000,
        recordIntervalMs: 10, monitorIntervalMs: 50
    )
}
