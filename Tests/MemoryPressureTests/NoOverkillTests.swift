@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// The ladder terminates no app once the footprint it measured before a termination, less what that
/// run's terminations returned, is under target, even when its measurement has not yet seen the
/// victims' memory go (a parent cgroup's figure that lags the kill): here the footprint is scripted
/// and does not fall at all.
@Suite(.exclusiveMemoryUse)
struct NoOverkillTests {
    let journal = TestAppJournal()

    @Test func theFirstTwoVictimsBeingEnoughExactlyTwoAreTerminated() async throws {
        let source = ScriptedSampleSource(residentBytes: 0)
        var configuration = try MemorySystem.Configuration.test(targetBytes: 64 * mebibyte, logger: silentLogger)
        configuration.monitor.sources = [source]
        let system = try MemorySystem(configuration: configuration)
        let footprint = system.budget.bytes(enteringAbove: .critical) + mebibyte
        let excess = footprint - system.targetBytes
        // The largest alone is not enough; the two largest are.
        let sizes = [("a", excess * 6 / 10), ("b", excess / 2), ("c", excess * 4 / 10)].map { ($0.0, ($0.1 + mebibyte - 1) / mebibyte) }
        try #require(sizes[0].1 * mebibyte < excess && (sizes[0].1 + sizes[1].1) * mebibyte >= excess)
        let registry = system.registry
        let journal = journal
        var apps: [App] = []
        for (name, mebibytes) in sizes {
            let app = try system.register(.test(name)) { ballastDelegate(mebibytes, registry: registry, journal: journal) }
            try await app.launch()
            #expect(try await app.enterBackground() == .suspended)
            apps.append(app)
        }
        let events = system.events.stream()
        let run = try await system.running {
            source.set(residentBytes: footprint, stall: nil)
            return await events.first { event in
                if case .ladderRun(let run) = event { run.level == .critical } else { false }
            }
        }
        guard case .ladderRun(let run)? = run else {
            Issue.record("no ladder run at critical")
            return
        }
        #expect(run.steps.flatMap(\.terminated).map(\.rawValue) == ["a", "b"], "c was not needed")
        // This run's records. The scripted footprint never falls, so the next sample's run may take
        // c before the system stops (under ThreadSanitizer one did): a run of its own, which starts
        // from nothing returned.
        let all = system.terminations.filter { $0.step == .terminateSuspended }
        let records = Array(all.prefix(2))
        #expect(records.map(\.app.rawValue) == ["a", "b"])
        if let later = all.dropFirst(2).first {
            #expect(later.app == .test("c") && later.decision?.earlierReturnedBytes == 0, "c, only in a later run: \(later)")
        } else {
            #expect(apps[2].state == .suspended)
        }
        // Each record says what the ladder counted as it chose the app: the first at the footprint
        // measured, the second at that less what the first returned, both above the target.
        #expect(records.first?.decision == TerminationRecord.LadderDecision(footprintBytes: footprint, targetBytes: system.targetBytes))
        #expect(records.last?.decision?.footprintBytes == footprint - (records.first?.returnedBytes ?? 0))
        // And each says the run's measurement and what its earlier terminations returned.
        #expect(records.map { $0.decision?.runFootprintBytes } == [footprint, footprint])
        #expect(records.map { $0.decision?.earlierReturnedBytes } == [0, records.first?.returnedBytes])
        #expect(records.allSatisfy { ($0.decision?.footprintBytes ?? 0) > system.targetBytes })
        #expect(run.footprintAfterBytes.map { $0 <= system.targetBytes } == true)
        _ = await system.shutDown()
    }
}
