@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// A process app holding under 1 % of what is still to be reclaimed is passed over while another
/// app may free what counts, and comes last: a frozen child of a few hundred KiB is not terminated
/// ahead of a background app holding the excess.
@Suite(.exclusiveMemoryUse)
struct PassedOverTests {
    let journal = TestAppJournal()

    @Test func aTinySuspendedProcessAppIsPassedOverForABackgroundAppThatHoldsTheExcess() async throws {
        let source = ScriptedSampleSource(residentBytes: 0)
        var configuration = try MemorySystem.Configuration.test(targetBytes: 64 * mebibyte, logger: silentLogger)
        configuration.monitor.sources = [source]
        let system = try MemorySystem(configuration: configuration)
        let footprint = system.budget.bytes(enteringAbove: .critical) + mebibyte
        let excess = footprint - system.targetBytes

        // A frozen child of 64 KiB, under 1 % of the excess, suspended: first in the iOS order.
        let tiny = try system.register(.test("tiny")) { IdleDelegate() }
        try await tiny.launch()
        let child = ChildFootprintsTests.StandIn(bytes: 64 << 10)
        system.processes.footprints.track(tiny.identifier, read: child.read)
        #expect(try await tiny.enterBackground() == .suspended)
        system.processes.footprints.freeze(tiny.identifier)
        #expect(64 << 10 < excess / 100)

        // A background app, kept running by a task, whose heap holds the excess.
        let registry = system.registry
        let journal = journal
        let longTasks = try AppConfiguration(backgroundTaskTimeLimit: .seconds(600))
        let big = try system.register(.test("big"), configuration: longTasks) {
            ballastDelegate((excess + mebibyte - 1) / mebibyte + 1, registry: registry, journal: journal)
        }
        try await big.launch()
        _ = try big.beginBackgroundTask { _ in }
        #expect(try await big.enterBackground() == .background)

        let events = system.events.stream()
        let run = try await system.running {
            source.set(residentBytes: footprint, stall: nil)
            return await events.first(within: generousDeadline) { $0.runUnderTarget != nil }?.runUnderTarget
        }
        #expect(run?.steps.flatMap(\.terminated) == [.test("big")], "the app that holds the excess, not the tiny one first")
        // The scripted footprint never falls, so the next sample's run may take the tiny app, the
        // only one left, before the system stops (under ThreadSanitizer one did in CI): in a run of
        // its own, which starts from nothing returned.
        if let later = system.terminations.first(where: { $0.app == tiny.identifier }) {
            #expect(later.decision?.earlierReturnedBytes == 0, "the tiny app, only in a later run: \(later)")
        } else {
            #expect(tiny.state == .suspended)
        }
        _ = await system.shutDown()
    }
}
