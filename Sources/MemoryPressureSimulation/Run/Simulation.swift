import FoundationEssentials
import Jemalloc
@_spi(Benchmarks) import MemoryPressure
import Synchronization

/// Runs a scenario on a real ``MemorySystem`` in this process: registers the scenario's apps,
/// carries out the plan's decisions at their times while the foreground app grows, records the
/// footprint, checks the invariants (``InvariantChecker``) and returns the report.
///
/// ```swift
/// let simulation = try Simulation(scenario: .standard, options: .init(limits: .current(), logger: logger))
/// let result = try await simulation.run()
/// print(result.report.peakFootprintBytes, result.report.invariantViolations)
/// ```
///
/// The memory the apps hold is real: pages in their heaps, every one written, so the process's
/// footprint is what the system judges. With ``SimulationOptions/manager`` off the system's monitor
/// still samples and announces levels, but nothing reclaims.
package final class Simulation: Sendable {
    /// The scenario run.
    package let scenario: Scenario
    /// How it runs.
    package let options: SimulationOptions
    /// Its decisions.
    package let plan: SimulationPlan
    private let budget: MemoryBudget
    private let live = Mutex<LiveParts?>(nil)
    private let hasRun = Atomic<Bool>(false)

    /// A simulation of `scenario`, which should be validated (``Scenario/validated(source:limits:)``).
    package init(scenario: Scenario, options: SimulationOptions) throws(SimulationError) {
        self.scenario = scenario
        self.options = options
        plan = SimulationPlan(scenario: scenario)
        do {
            budget = try MemoryBudget(totalBytes: scenario.budgetBytes, limits: options.limits)
        } catch {
            throw SimulationError(.invalidScenario, "\(error)")
        }
    }

    /// Where the run stands, or nil before it starts.
    package var progress: SimulationProgress? {
        live.withLock { $0 }.map { parts in
            let counts = parts.tally.snapshot
            return SimulationProgress(
                elapsed: min(ContinuousClock.now - parts.start, scenario.duration), duration: scenario.duration,
                footprintBytes: parts.recorder.latestFootprintBytes, budgetBytes: scenario.budgetBytes,
                level: parts.system.monitor.level, foreground: parts.driver.foreground,
                warnings: counts.warnings, purges: counts.purges, terminations: counts.terminations.count,
                relaunches: parts.journal.restorations.relaunches
            )
        }
    }

    /// Runs the scenario for its duration (less if the task is cancelled) and returns the report.
    /// Throws when the system cannot be set up or its monitor cannot start. Runs once.
    package func run() async throws(SimulationError) -> SimulationResult {
        guard !hasRun.exchange(true, ordering: .relaxed) else { throw SimulationError(.alreadyRun, "a simulation runs once") }
        let (simulated, allocatedAtStart) = try await simulate()
        var result = simulated
        // The system and its apps are gone now; the run's records (reserved before the start
        // reading) and the result are what is left.
        if let allocatedAtStart, let afterShutdown = Self.settledAllocatedBytes() {
            result.report.allocatedBytes = .init(atStart: allocatedAtStart, afterShutdown: afterShutdown)
        }
        return result
    }

    /// Sets the system up, runs the scenario on it, and shuts it down; returns the result and
    /// jemalloc's allocated bytes just before the first app launched.
    private func simulate() async throws(SimulationError) -> (SimulationResult, allocatedAtStart: Int?) {
        let stateDirectory = try StateDirectory(options.stateDirectory)
        defer { stateDirectory.removeIfTemporary() }
        let system = try makeSystem(archive: stateDirectory)
        let journal = AppJournal()
        let apps = try register(in: system, journal: journal)
        // With process apps, each record samples the children too: their peaks, and their bytes in
        // the timeline's footprint.
        let sampler = options.processes.map { _ in ProcessSampler(system: system, apps: scenario.apps.map(\.name)) }
        let start = ContinuousClock.now
        let expectedCount = Int(scenario.duration / options.recordInterval) + 64
        let recorder = sampler.map { sampler in FootprintRecorder(start: start, expectedCount: expectedCount) { sampler.sample() } }
            ?? FootprintRecorder(start: start, expectedCount: expectedCount)
        let parts = LiveParts(
            start: start, system: system, journal: journal, recorder: recorder,
            tally: EventTally(start: start), driver: SimulationDriver(apps: apps, spikeChunkPause: options.spikeChunkPause)
        )
        let checker = InvariantChecker(journal: journal, start: start, processApps: sampler != nil) { system.footprint(of: $0).totalBytes }
        let lifecycleObservation = sampler == nil
            ? system.lifecycleEvents.observe { checker.observe($0) }
            : system.lifecycleEvents.observe { event in
                checker.observe(event)
                // A process app's delegate is in its child: its launches and saves are recorded here.
                Self.recordProcessApp(event, in: system, journal: journal)
            }
        let monitorObservation = system.monitor.events.observe { event in
            if case .change(let change) = event { parts.tally.count(change) }
        }
        let events = system.events.stream(bufferLimit: 1 << 16)
        live.withLock { $0 = parts }
        let allocatedAtStart = Self.settledAllocatedBytes()

        let end: ContinuousClock.Instant
        do {
            end = try await withThrowingDiscardingTaskGroup { observers in
                observers.addTask {
                    for await event in events {
                        parts.tally.count(event)
                        checker.check(event)
                    }
                }
                let end = try await withThrowingDiscardingTaskGroup { running in
                    running.addTask { try await self.runSystem(system) }
                    running.addTask {
                        await parts.recorder.run(every: self.options.recordInterval, level: { system.monitor.level }, foreground: { parts.driver.foreground })
                    }
                    running.addTask {
                        await ActivityTicker(interval: self.options.activityInterval, driver: parts.driver, apps: apps).run()
                    }
                    await parts.driver.run(plan, from: start, until: start + scenario.duration)
                    let end = ContinuousClock.now
                    running.cancelAll()
                    return end
                }
                parts.recorder.record(level: system.monitor.level, foreground: parts.driver.foreground)
                // Let the apps still letting go of their memory report, and the event reader catch up.
                try? await Task.sleep(for: Self.drainTime)
                observers.cancelAll()
                return end
            }
        } catch {
            live.withLock { $0 = nil }
            throw SimulationError(.runFailed, "the memory system could not run: \(error)")
        }
        lifecycleObservation.cancel()
        monitorObservation.cancel()
        var result = makeResult(parts: parts, checker: checker, duration: end - start)
        let shutDown = await system.shutDown()
        if let sampler {
            result.report.processes = sampler.report
            result.report.shutDownExits = shutDown.compactMap { record in
                record.processExit.map { .init(app: record.app.rawValue, state: record.state.description, processExit: $0.description) }
            }.sorted { $0.app < $1.app }
        }
        live.withLock { $0 = nil }
        return (result, allocatedAtStart)
    }

    /// Records a process app's launch with the state it restored, and, once it is suspended (its
    /// `didEnterBackground` answered, the state its child saved then read), the state in its
    /// archive: what its child saved last, which its next launch must restore.
    private static func recordProcessApp(_ event: LifecycleEvent, in system: MemorySystem, journal: AppJournal) {
        guard case .stateChanged(let app, let previous, let state) = event else { return }
        if previous == .notRunning, let options = system.app(app)?.launchOptions {
            let (restored, failure) = decodedState(options.restoredState)
            _ = journal.recordLaunch(of: app, restored: restored, failure: options.restorationFailure.map { "an unreadable archive (\($0))" } ?? failure)
        } else if state == .suspended {
            do {
                let (saved, failure) = decodedState(try system.stateArchive?.load(for: app))
                if let saved { journal.recordSave(of: app, saved) }
                if let failure { journal.recordError("\(app)'s archive holds \(failure)") }
            } catch {
                journal.recordError("\(app)'s archive cannot be read: \(error)")
            }
        }
    }

    /// The state a process app's child saved, decoded; or why it does not decode.
    private static func decodedState(_ bytes: [UInt8]?) -> (SavedState?, String?) {
        guard let bytes else { return (nil, nil) }
        do {
            return (try JSONDecoder().decode(SavedState.self, from: Data(bytes)), nil)
        } catch {
            return (nil, "a state it could not decode (\(error))")
        }
    }

    /// jemalloc's allocated bytes now, with this thread's cache returned first; nil when the
    /// statistics cannot be read.
    private static func settledAllocatedBytes() -> Int? {
        try? Jemalloc.flushThreadCache()
        return try? JemallocStatistics.current().allocated
    }

    // MARK: Setting up

    private func makeSystem(archive: StateDirectory) throws(SimulationError) -> MemorySystem {
        var configuration = MemorySystem.Configuration(budget: budget, stateArchiveDirectory: archive.path, logger: options.logger)
        configuration.monitor.interval = options.monitorInterval
        // The simulated device's pressure is its budget; the host's stall and cgroup events are not part of it.
        configuration.monitor.stallThresholds = nil
        configuration.monitor.stallTrigger = nil
        configuration.monitor.controlGroupEvents = .none
        do {
            return try MemorySystem(configuration: configuration)
        } catch {
            throw SimulationError(.runFailed, "\(error)")
        }
    }

    private func register(in system: MemorySystem, journal: AppJournal) throws(SimulationError) -> [AppIdentifier: App] {
        var apps: [AppIdentifier: App] = [:]
        for (index, scenarioApp) in scenario.apps.enumerated() {
            let context = AppContext(registry: system.registry, journal: journal, seed: scenario.seed, index: index + 1)
            let profile = scenarioApp.profile
            do {
                if let processes = options.processes {
                    apps[scenarioApp.name] = try system.register(
                        scenarioApp.name, process: processes.specification(scenarioApp, index + 1, scenario.seed),
                        configuration: .default, limits: .none, options: ProcessAppOptions(channel: .client)
                    )
                } else {
                    apps[scenarioApp.name] = try system.register(scenarioApp.name) {
                        SimulatedAppDelegate(profile: profile, context: context)
                    }
                }
            } catch {
                throw SimulationError(.runFailed, "\(error)")
            }
        }
        return apps
    }

    /// Runs the ladder, or with the manager off only the monitor, until cancelled.
    private func runSystem(_ system: MemorySystem) async throws(MemoryPressureError) {
        guard !options.manager else {
            try await system.run()
            return
        }
        try system.monitor.start()
        defer { system.monitor.stop() }
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(3600))
        }
    }

    // MARK: Results

    private func makeResult(parts: LiveParts, checker: InvariantChecker, duration: Duration) -> SimulationResult {
        let counts = parts.tally.snapshot
        let timeline = Timeline(
            scenario: scenario.name, seed: scenario.seed, manager: options.manager, budgetBytes: budget.totalBytes,
            warningBytes: budget.bytes(enteringAbove: .warning), criticalBytes: budget.bytes(enteringAbove: .critical),
            targetBytes: parts.system.targetBytes, durationSeconds: duration.inSeconds,
            samples: parts.recorder.recorded, marks: counts.marks.sorted { $0.seconds < $1.seconds }
        )
        let latency = parts.system.purgeLatency
        let restorations = parts.journal.restorations
        let peak = timeline.peakFootprintBytes
        let overBudget = timeline.timeOverBudgetSeconds
        let report = SimulationReport(
            scenario: scenario.name, seed: scenario.seed, manager: options.manager, apps: scenario.apps.count,
            budgetBytes: budget.totalBytes, targetBytes: timeline.targetBytes,
            warningThresholdBytes: timeline.warningBytes, criticalThresholdBytes: timeline.criticalBytes,
            durationSeconds: timeline.durationSeconds, peakFootprintBytes: peak,
            timeOverBudgetSeconds: overBudget,
            timeOverBudgetFraction: timeline.durationSeconds > 0 ? overBudget / timeline.durationSeconds : 0,
            maxOvershootBytes: max(0, peak - budget.totalBytes),
            levelChanges: .init(warning: counts.warningLevelChanges, critical: counts.criticalLevelChanges),
            warningsDelivered: .init(
                warnings: counts.warnings, appDelegates: counts.delegatesReached,
                viewControllers: counts.viewControllersReached, observers: counts.observersReached
            ),
            purges: .init(count: counts.purges, bytes: counts.purgedBytes),
            purgeLatencyMs: .init(
                count: latency.count, p50: latency.p50.map(\.inMilliseconds),
                p99: latency.p99.map(\.inMilliseconds), max: latency.max.map(\.inMilliseconds)
            ),
            reactionMs: .init(counts.reactions.durations),
            refusedAllocations: Dictionary(uniqueKeysWithValues: parts.system.refusedAllocations.map { ($0.key.rawValue, $0.value) }),
            refusedBytes: parts.journal.refusedBytes.values.reduce(0, +),
            terminations: counts.terminations.map { record in
                .init(
                    app: record.app.rawValue, state: record.state.description, footprintBytes: record.footprintBytes,
                    reason: record.reason.description, step: record.step?.description,
                    atSeconds: (record.time - parts.start).inSeconds, reclaimedBytes: record.returnedBytes,
                    processExit: record.processExit?.description
                )
            },
            relaunches: restorations.relaunches, restoredStates: restorations.restored, lostStates: restorations.lost,
            invariantViolations: checker.violations, appErrors: parts.journal.appErrors,
            decisions: parts.driver.decisions, decisionDigest: plan.digest,
            samples: timeline.samples.count, recordIntervalMs: options.recordInterval.inMilliseconds,
            monitorIntervalMs: options.monitorInterval.inMilliseconds
        )
        return SimulationResult(report: report, timeline: timeline)
    }

    /// How long the event reader is given, after the run, to take the last events.
    static let drainTime: Duration = .milliseconds(200)
}

/// The parts of a running simulation that the live progress reads.
private struct LiveParts: Sendable {
    let start: ContinuousClock.Instant
    let system: MemorySystem
    let journal: AppJournal
    let recorder: FootprintRecorder
    let tally: EventTally
    let driver: SimulationDriver
}
