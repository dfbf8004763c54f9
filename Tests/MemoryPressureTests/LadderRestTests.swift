import MemoryPressure
import MemoryPressureTestKit
import Testing

/// A ladder held above target with nothing left to reclaim rests until something changes, instead
/// of running on every sample. The footprint is scripted, held still: the process's own resident
/// bytes move with whatever other suites allocate meanwhile, and a rise of a step is a change the
/// ladder must run for.
struct LadderRestTests {
    /// A system with a budget of 1 GiB, its warning threshold at 75% and critical at 90%, whose
    /// footprint is what `footprint` says, on `clock`, which the test steps.
    static func system(footprint: ScriptedSampleSource, clock: ManualClock) throws -> MemorySystem {
        var configuration = MemorySystem.Configuration(budget: try MemoryBudget(totalBytes: 1 << 30), logger: silentLogger)
        configuration.monitor.sources = [footprint]
        configuration.monitor.interval = .milliseconds(10)
        configuration.monitor.settleTime = .zero
        configuration.monitor.stallThresholds = nil
        configuration.monitor.stallTrigger = nil
        configuration.monitor.controlGroupEvents = .none
        configuration.clock = clock
        return try MemorySystem(configuration: configuration)
    }

    @Test func aLadderWithNothingToReclaimRestsUntilSomethingChanges() async throws {
        let clock = ManualClock()
        let footprint = ScriptedSampleSource(residentBytes: 0)
        let system = try Self.system(footprint: footprint, clock: clock)
        // Above the warning threshold, below critical. At warning the ladder purges only background
        // and suspended apps, and the one app is active.
        footprint.set(residentBytes: (system.budget.bytes(enteringAbove: .warning) + system.budget.bytes(enteringAbove: .critical)) / 2, stall: nil)
        let active = try system.register(.test("active")) { IdleDelegate() }
        try await active.launch()
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
        withExtendedLifetime(counting) {}
        // Once per sample would be hundreds; the ladder ran at most a few times.
        #expect(runsWhileResting <= 3, "the ladder ran \(runsWhileResting) times in 5 s with nothing to reclaim")
    }

    /// While the ladder rests, a repeat of the raised level warns no app: the apps had their warning
    /// and nothing changed. Once the footprint rises by a step, the next repeat warns again.
    @Test func aRestingLadderRepeatsNoWarningUntilTheFootprintRises() async throws {
        let clock = ManualClock()
        let footprint = ScriptedSampleSource(residentBytes: 0)
        var configuration = try Self.system(footprint: footprint, clock: clock).configuration
        configuration.monitor.repeatInterval = .seconds(1)
        let system = try MemorySystem(configuration: configuration)
        let resting = (system.budget.bytes(enteringAbove: .warning) + system.budget.bytes(enteringAbove: .critical)) / 2
        footprint.set(residentBytes: resting, stall: nil)
        let active = try system.register(.test("active")) { IdleDelegate() }
        try await active.launch()
        let warnings = SharedBox(0)
        let counting = system.events.observe { event in
            if case .warning = event { warnings.update { $0 += 1 } }
        }
        try await system.running {
            #expect(await eventually { system.monitor.level == .warning && warnings.value == 1 })
            // Five repeat intervals at rest.
            #expect(await clock.step(by: .milliseconds(100), times: 50, handledBy: system))
            #expect(warnings.value == 1, "no repeat while resting")
            // The footprint rises by more than a step (1/32 of the budget): the next repeat warns.
            footprint.set(residentBytes: resting + system.budget.totalBytes / 16, stall: nil)
            #expect(await clock.step(by: .milliseconds(100), times: 12, handledBy: system))
            #expect(await eventually { warnings.value >= 2 })
        }
        withExtendedLifetime(counting) {}
    }
}
