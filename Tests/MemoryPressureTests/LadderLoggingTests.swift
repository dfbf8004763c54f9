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

/// What the ladder logs under sustained pressure: a few lines per announcement, not one per sample.
@Suite(.exclusiveMemoryUse)
struct LadderLoggingTests {
    @Test func sustainedPressureLogsAFewLinesAtInfoNotOnePerSample() async throws {
        let (logger, messages) = recordingLogger()
        let source = ScriptedSampleSource(residentBytes: 0)
        var configuration = try MemorySystem.Configuration.test(targetBytes: 64 * mebibyte)
        configuration.logger = logger
        configuration.monitor.sources = [source]
        let system = try MemorySystem(configuration: configuration)
        let cache = try PurgeableCache<Int, [UInt8]>(name: "responses", owner: .test("service"), category: .rebuildableObjects)
        system.register(cache)

        // Warning, above target, for 20 ladder runs, with the cache refilled as soon as it is purged
        // (by an observer of the purge, so that every run finds something to reclaim and the
        // ladder never rests, however late a task of the test would run on a loaded machine).
        try cache.setValue([], forKey: 0, cost: mebibyte)
        let refilling = system.events.observe { event in
            if case .purge = event, cache.count == 0 { try? cache.setValue([], forKey: 0, cost: mebibyte) }
        }
        try await system.running {
            source.set(residentBytes: configuration.budget.bytes(enteringAbove: .warning) + 1, stall: nil)
            #expect(await eventually { system.ladderRuns.count >= 20 })
        }
        withExtendedLifetime(refilling) {}

        let purges = system.ladderRuns.filter { $0.steps.contains { $0.step == .purge && $0.releasedBytes > 0 } }
        #expect(purges.count >= 2)
        #expect(messages.messages(atLeast: .info) == [
            "memory pressure normal -> warning", "purged caches and stores", "reclamation ladder ran",
        ])
        #expect(messages.messages(atLeast: .debug).count >= 20)
    }
}
