import Jemalloc
import Logging

/// The policy that turns the monitor's announcements and samples into purges, warnings and
/// terminations, run by ``MemorySystem/run()`` on one task, one event at a time.
///
/// It runs on every rise or repeat of a raised level (delivering warnings), and on every fall and
/// every fresh sample while the level is raised and the footprint is above target. A run climbs as far
/// as the level allows and stops as soon as a measurement finds the footprint under target. The
/// purge latency runs from the sample that crossed the warning threshold to that measurement.
struct ReclamationLadder {
    let system: MemorySystem
    private var sampler: MemorySampler
    private var limits = AppLimitEnforcer()
    /// When the last run ended: samples taken before then (the announced one among them) are
    /// stale, and are not run again.
    private var lastRunEnd: ContinuousClock.Instant?
    /// When the sample that crossed the warning threshold was taken, until the footprint is back
    /// under target.
    private var crossingTime: ContinuousClock.Instant?

    init(system: MemorySystem) {
        self.system = system
        sampler = MemorySampler(sources: system.configuration.monitor.sources, logger: system.logger)
    }

    private var target: Int { system.targetBytes }

    mutating func handle(_ event: PressureEvent) async {
        switch event {
        case .change(let change):
            system.emit(.pressure(change))
            system.logger.log(level: change.level == .critical ? .notice : .info, "memory pressure \(change)", metadata: [
                "level": "\(change.level)", "previous": "\(change.previous)", "kind": "\(change.kind)",
                "footprint": "\(change.sample.footprintBytes.map(String.init) ?? "unknown")",
                "budget": "\(system.configuration.budget.totalBytes)",
            ])
            guard change.level > .normal else {
                crossingTime = nil
                return
            }
            if change.kind == .fall {
                await climbIfAboveTarget(to: change.level, from: change.sample)
            } else {
                if crossingTime == nil { crossingTime = change.sample.time }
                await climb(to: change.level, from: change.sample, warn: true)
            }
        case .sample(let sample, let level):
            await limits.enforce(in: system, level: level, sample: sample)
            guard level > .normal else { return }
            await climbIfAboveTarget(to: level, from: sample)
        }
    }

    /// Runs the ladder without warnings when `sample` is fresh and above target.
    private mutating func climbIfAboveTarget(to level: PressureLevel, from sample: MemorySample) async {
        if let lastRunEnd, sample.time < lastRunEnd { return }
        guard let footprint = sample.footprintBytes, footprint > target else {
            crossingTime = nil
            return
        }
        await climb(to: level, from: sample, warn: false)
    }

    /// One run of the ladder up to `level`. `warn` marks a run for an announcement (a rise or a
    /// repeat): its purge and its outcome are logged at `info`. Runs for later samples are logged at
    /// `debug`, except the one that brings an announced episode back under target, so sustained
    /// pressure costs a few lines per announcement, not one per sample.
    private mutating func climb(to level: PressureLevel, from sample: MemorySample, warn: Bool) async {
        let announced = crossingTime != nil
        var run = LadderRun(
            level: level, crossingTime: crossingTime ?? sample.time, startTime: .now, endTime: .now,
            footprintBeforeBytes: sample.footprintBytes, footprintAfterBytes: nil, targetBytes: target,
            steps: [], latency: nil
        )
        purge(for: level, into: &run, logLevel: warn ? .info : .debug)
        if warn {
            await deliverWarnings(level, sample: sample, into: &run)
        }
        var footprint = measure()
        if level == .critical {
            for state in [AppState.suspended, .background] {
                footprint = await terminate(state, while: footprint, into: &run)
            }
        }
        run.endTime = .now
        lastRunEnd = run.endTime
        run.footprintAfterBytes = footprint.bytes
        if let bytes = footprint.bytes, bytes <= target {
            run.latency = footprint.time - run.crossingTime
            crossingTime = nil
        }
        system.ledger.withLock { $0.append(run) }
        let closesAnnouncedEpisode = announced && run.latency != nil
        system.logger.log(level: warn || closesAnnouncedEpisode ? .info : .debug, "reclamation ladder ran", metadata: [
            "level": "\(level)", "footprint": "\(run.footprintAfterBytes.map(String.init) ?? "unknown")",
            "target": "\(target)", "latency": "\(run.latency.map { "\($0)" } ?? "above target")",
            "steps": "\(run.steps.map(\.step.description).joined(separator: ","))",
        ])
        system.emit(.ladderRun(run))
    }

    /// Purges the caches and stores of suspended and background apps (every app's at critical), and
    /// those of owners that are not hosted apps (a service's own caches), and returns freed pages
    /// to the operating system.
    private func purge(for level: PressureLevel, into run: inout LadderRun, logLevel: Logger.Level) {
        let clock = ContinuousClock()
        let start = clock.now
        let states: Set<AppState> = level == .critical
            ? [.active, .inactive, .background, .suspended]
            : [.background, .suspended]
        let apps = system.apps
        let unhosted = system.registry.registeredApps.subtracting(apps.map(\.identifier))
        let targets = apps.filter { states.contains($0.state) }.map(\.identifier) + unhosted
        var report = system.registry.purge(level == .critical ? .critical : .warning, apps: targets)
        do { try Jemalloc.purgeAllArenas() } catch { report.arenaPurgeFailures.append(error) }
        let duration = clock.now - start
        run.steps.append(.init(step: .purge, duration: duration, releasedBytes: report.releasedBytes, terminated: []))
        if !report.entries.isEmpty {
            system.logger.log(level: logLevel, "purged caches and stores", metadata: [
                "level": "\(level)", "bytes": "\(report.releasedBytes)", "apps": "\(targets.count)",
                "duration": "\(duration)",
            ])
        }
        system.emit(.purge(report, step: .purge))
    }

    /// Delivers a memory warning to every running app and waits for them to finish with it.
    private func deliverWarnings(_ level: PressureLevel, sample: MemorySample, into run: inout LadderRun) async {
        let warning = MemoryWarning(level: level, sample: sample)
        let delivery = await warning.deliver(to: system.apps, timeout: system.configuration.warningTimeout) {
            system.footprint(of: $0.identifier).totalBytes
        }
        run.steps.append(.init(step: .warning, duration: delivery.duration, releasedBytes: 0, terminated: []))
        system.emit(.warning(delivery, step: .warning))
    }

    /// Terminates apps in `state`, largest first, one at a time, re-measuring after each, until the
    /// footprint is under target or none is left. Returns the last measurement.
    private mutating func terminate(
        _ state: AppState,
        while footprint: Measurement,
        into run: inout LadderRun
    ) async -> Measurement {
        let clock = ContinuousClock()
        let start = clock.now
        let step: ReclamationStep = state == .suspended ? .terminateSuspended : .terminateBackground
        var footprint = footprint
        var terminated: [AppIdentifier] = []
        var returned = 0
        while !Task.isCancelled, footprint.isAbove(target), let victim = largestApp(in: state, excluding: terminated) {
            if let record = await system.terminate(victim, reason: .systemPressure, step: step) {
                returned += record.returnedBytes
            }
            terminated.append(victim.identifier)
            footprint = measure()
        }
        if !terminated.isEmpty {
            run.steps.append(.init(step: step, duration: clock.now - start, releasedBytes: returned, terminated: terminated))
        }
        return footprint
    }

    /// The app in `state` with the largest footprint now (ties go to the first identifier), other
    /// than those in `excluded`.
    private func largestApp(in state: AppState, excluding excluded: [AppIdentifier]) -> App? {
        system.apps
            .filter { $0.state == state && !excluded.contains($0.identifier) }
            .map { (app: $0, bytes: system.footprint(of: $0.identifier).totalBytes) }
            .min { $0.bytes != $1.bytes ? $0.bytes > $1.bytes : $0.app.identifier < $1.app.identifier }?
            .app
    }

    /// A footprint reading and when it was taken.
    private struct Measurement {
        var bytes: Int?
        var time: ContinuousClock.Instant

        func isAbove(_ target: Int) -> Bool {
            bytes.map { $0 > target } ?? true
        }
    }

    /// Reads the footprint now, from the monitor's sources.
    private mutating func measure() -> Measurement {
        var sample = sampler.sample(.cheap)
        if sample.footprintBytes == nil { sample = sampler.sample(.full) }
        return Measurement(bytes: sample.footprintBytes, time: sample.time)
    }
}
