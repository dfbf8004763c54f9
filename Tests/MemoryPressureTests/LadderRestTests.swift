import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// A ladder held above target with nothing left to reclaim rests until something changes, instead
/// of running on every sample.
@Suite(.exclusiveMemoryUse)
struct LadderRestTests {
    /// A system whose warning threshold sits 16 MiB above `baseline` and critical 96 MiB above it,
    /// on `clock`, which the test steps.
    static func system(above baseline: Int, clock: ManualClock) throws -> MemorySystem {
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
        configuration.clock = clock
        return try MemorySystem(configuration: configuration)
    }

    @Test func aLadderWithNothingToReclaimRestsUntilSomethingChanges() async throws {
        let baseline = try settledResidentBytes()
        let clock = ManualClock()
        let system = try Self.system(above: baseline, clock: clock)
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
            let restStart = clock.now
            let samplesBefore = samples.value
            // Five seconds of samples, each at an instant stepped to.
            #expect(await clock.step(by: .milliseconds(10), times: 500, sampledBy: system.monitor))
            #expect(samples.value - samplesBefore > 100, "the monitor sampled all along")
            let restEnd = clock.now

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
            try await arrival.enterBackground()
            // The next sample, at a later instant, runs the ladder again. The ladder takes the
            // samples in order, so once it has run on this one it has seen every sample of the rest:
            // the runs it started before this instant are all the runs of the rest.
            clock.step(by: .milliseconds(10))
            let arrivalTime = clock.now
            #expect(await system.monitor.hasSampledAtTheTimeNow())
            #expect(await eventually { system.ladderRuns.contains { $0.startTime >= arrivalTime } })
            return system.ladderRuns.filter { $0.startTime >= restStart && $0.startTime <= restEnd }.count
        }
        withExtendedLifetime((ballast, counting)) {}
        // Once per sample would be hundreds; the ladder ran at most a few times.
        #expect(runsWhileResting <= 3, "the ladder ran \(runsWhileResting) times in 5 s with nothing to reclaim")
    }
}
