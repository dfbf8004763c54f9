import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// The bounded give-up: with the footprint held above the budget by an active app's own memory, the
/// system reports `unrecoverable` once the configured time has passed with nothing left to reclaim,
/// and not while each ladder run still reclaims something. Real allocator, real statm.
@Suite(.exclusiveMemoryUse)
struct UnrecoverableTests {
    static let giveUpAfter = Duration.milliseconds(500)

    @Test func theGiveUpReportsOnceAfterItsDurationAndNeverWhileTheLadderStillReclaims() async throws {
        let baseline = try settledResidentBytes()
        var configuration = MemorySystem.Configuration(budget: try MemoryBudget(totalBytes: baseline + 64 * mebibyte), logger: silentLogger)
        configuration.monitor.interval = .milliseconds(10)
        configuration.monitor.stallThresholds = nil
        configuration.monitor.stallTrigger = nil
        configuration.monitor.controlGroupEvents = .none
        configuration.unrecoverable = try Unrecoverable(after: Self.giveUpAfter, action: .report)
        // The test steps the system's time, a sample at each step.
        let clock = ManualClock()
        configuration.clock = clock
        let system = try MemorySystem(configuration: configuration)

        // The active app's own 96 MiB: above the budget, and never the ladder's to reclaim.
        let active = try system.register(.test("active")) { IdleDelegate() }
        try await active.launch()
        let ballast = try residentBuffers(in: system.heap(for: active.identifier), totalBytes: 96 * mebibyte)
        // A service cache refilled after each purge, while `refilling` holds: every run reclaims it.
        let cache = try PurgeableCache<Int, Int>(name: "refilled", category: .rebuildableObjects)
        system.register(cache)
        let refilling = SharedBox(true)
        let purges = SharedBox(0)
        let givenUp = SharedLog<UnrecoverableFootprint>()
        let observation = system.events.observe { event in
            switch event {
            case .purge(let report, _) where report.releasedBytes > 0:
                purges.update { $0 += 1 }
                if refilling.value { try? cache.setValue(1, forKey: 1, cost: mebibyte) }
            case .unrecoverable(let footprint):
                givenUp.append(footprint)
            default:
                break
            }
        }
        try cache.setValue(1, forKey: 1, cost: mebibyte)

        try await system.running {
            // Four times the give-up's duration over the budget, each run reclaiming the cache: at
            // that instant, with the ladder done with every sample up to it, no give-up.
            #expect(await eventually { system.monitor.level == .critical })
            let steps = (Self.giveUpAfter * 4) / .milliseconds(10)
            #expect(await clock.step(by: .milliseconds(10), times: Int(steps), handledBy: system))
            #expect(purges.value > 4, "the ladder kept reclaiming the refilled cache")
            #expect(givenUp.all.isEmpty)

            // Nothing left to reclaim: the give-up, once its duration has passed.
            refilling.value = false
            #expect(await clock.step(by: .milliseconds(10), times: Int(steps), handledBy: system) { !givenUp.all.isEmpty })
            #expect(!givenUp.all.isEmpty)
            // Twice its duration more: still the one give-up.
            #expect(await clock.step(by: .milliseconds(10), times: Int(steps) / 2, handledBy: system))
        }
        withExtendedLifetime((ballast, observation)) {}
        let reports = givenUp.all
        #expect(reports.count == 1)
        let report = try #require(reports.first)
        #expect(report.duration >= Self.giveUpAfter)
        #expect(report.footprintBytes > report.budgetBytes)
        #expect(report.budgetBytes == system.budget.totalBytes)
        await system.shutDown()
    }

    @Test func aDurationOfZeroOrLessIsRefused() {
        for duration in [Duration.zero, .milliseconds(-1)] {
            let error = #expect(throws: MemoryPressureError.self) { _ = try Unrecoverable(after: duration, action: .report) }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.description.contains("expected a duration greater than zero") == true)
        }
    }
}
