import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// A ladder held above target with nothing left to reclaim rests until something changes, instead
/// of running on every sample.
@Suite(.exclusiveMemoryUse)
struct LadderRestTests {
    /// A system whose warning threshold sits 16 MiB above `baseline` and critical 96 MiB above it.
    static func system(above baseline: Int) throws -> MemorySystem {
        let budgetBytes = baseline + 128 * mebibyte
        func ratio(_ above: Int) -> Double { Double(baseline + above * mebibyte) / Double(budgetBytes) }
        let thresholds = try MemoryBudget.Thresholds(
            warning: ratio(16), critical: ratio(96), warningRecovery: ratio(8), criticalRecovery: ratio(80)
        )
        var configuration = MemorySystem.Configuration(budget: try MemoryBudget(totalBytes: budgetBytes, thresholds: thresholds), logger: silentLogger)
        configuration.monitor.interval = .milliseconds(10)
        configuration.monitor.settleTime = .zero
        configuration.monitor.stallThresholds = nil
        configuration.monitor.stallTrigger = nil
        configuration.monitor.controlGroupEvents = .none
        return try MemorySystem(configuration: configuration)
    }

    @Test func aLadderWithNothingToReclaimRestsUntilSomethingChanges() async throws {
        let baseline = try settledResidentBytes()
        let system = try Self.system(above: baseline)
        // The active app holds 48 MiB: above the warning threshold, below critical. At warning the
        // ladder purges only background and suspended apps, and there are none.
        let active = try system.register(.test("active")) { IdleDelegate() }
        try await active.launch()
        let ballast = try residentBuffers(in: system.heap(for: active.identifier), totalBytes: 48 * mebibyte)
        let samples = SharedBox(0)
        let counting = system.monitor.events.observe { event in
            if case .sample = event { samples.update { $0 += 1 } }
        }
        let runsWhileResting = try await system.running {
            #expect(await eventually { system.monitor.level == .warning })
            let before = system.ladderRuns.count
            let samplesBefore = samples.value
            try await Task.sleep(for: .seconds(5))
            #expect(samples.value - samplesBefore > 100, "the monitor sampled all along")
            let resting = system.ladderRuns.count - before

            // Something to reclaim arrives: a suspended app with a cache. The ladder runs again.
            let cache = try PurgeableCache<Int, HeapBuffer>(
                name: "tiles", owner: .test("arrival"), category: .rebuildableObjects, payloadLocation: .appHeap
            )
            let arrival = try system.register(.test("arrival")) { [system] in
                let delegate = RecordingDelegate()
                delegate.onDidFinishLaunching = { app, _ in
                    system.register(cache)
                    for key in 0..<4 { try? cache.setValue(try! system.heap(for: app.identifier).allocate(byteCount: mebibyte), forKey: key, cost: mebibyte) }
                }
                return delegate
            }
            try await arrival.launch()
            let runsBefore = system.ladderRuns.count
            try await arrival.enterBackground()
            #expect(await eventually { system.ladderRuns.count > runsBefore })
            return resting
        }
        withExtendedLifetime((ballast, counting)) {}
        // Once per sample would be hundreds; the ladder ran at most a few times.
        #expect(runsWhileResting <= 3, "the ladder ran \(runsWhileResting) times in 5 s with nothing to reclaim")
    }
}
