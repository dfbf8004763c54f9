#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Jemalloc
import Logging
import MemoryPressureRuntime
import MemoryPressureMeasurement
import MemoryPressureMonitor
import MemoryPressureCaches
@_spi(Benchmarks) import MemoryPressureLifecycle

// Reclamation, in five pieces:
// - BackgroundPurge: step 1, an app entering the background (and still there) is purged.
// - ReclamationLadder: steps 2 and 3 on the monitor's events, with AppLimitEnforcer on each sample.
// - Terminator: the one termination call, and the record of every termination, whoever caused it.
// - HostedApps and ReclamationJournal: the apps it may act on, and where what it did is kept.

/// The policy that turns the monitor's announcements and samples into purges, warnings and
/// terminations (steps 2 and 3 of the ladder; per-app limits are checked on every sample).
///
/// It runs on every rise or repeat of a raised level (delivering warnings), and on every fall and
/// every fresh sample while the level is raised and the footprint is above target. A run climbs as far
/// as the level allows and stops as soon as a measurement finds the footprint under target. The
/// purge latency runs from the first crossing of the episode (the heap allocation that crossed, or
/// the first sample over the threshold, whichever came first) to that measurement.
///
/// Its inputs are narrow: the hosted apps, the registry, the monitor (to measure between samples),
/// the terminator, and the journal it reports to.
struct ReclamationLadder {
    let apps: HostedApps
    let registry: PurgeRegistry
    let monitor: PressureMonitor
    /// Where crossings seen on the allocation path wait to be claimed.
    let account: FootprintAccount
    let terminator: Terminator
    let journal: ReclamationJournal
    let warnings: WarningFollower
    /// Pages suspended apps out before any is terminated, where compression is on.
    let compressor: Compressor
    let configuration: MemorySystem.Configuration
    private var limits: AppLimitEnforcer
    /// When the last run ended: samples taken before then (the announced one among them) are
    /// stale, and are not run again.
    private var lastRunEnd: ContinuousClock.Instant?
    /// When the sample that crossed the warning threshold was taken, until the footprint is back
    /// under target.
    private var crossingTime: ContinuousClock.Instant? {
        didSet {
            guard crossingTime == nil, oldValue != nil else { return }
            // The episode is over: a crossing noted while it was open belongs to it, not the next.
            announced = false
            _ = account.claimCrossing()
        }
    }
    /// Whether the episode under way was announced (a rise or a repeat), which decides how loudly
    /// the run that closes it is logged.
    private var announced = false
    /// Set when a run ended above target with nothing left to reclaim: until something changes,
    /// samples do not run the ladder again (announcements still do).
    private var rest: Rest?
    /// Whether the protected apps were last found to hold more than the target (said once).
    private var protectedAboveTargetReported = false
    /// How long the footprint has stayed above the budget while resting, when the configuration
    /// gives up.
    private var unrecoverable: UnrecoverableClock?

    /// What the ladder waits for while it rests: the footprint rising by ``step`` above where it
    /// rested, the level rising, or something new to reclaim (an app entering the background or
    /// suspension; a cache, store or heap registered). A repeat of the level warns the apps only
    /// when the run that began the rest did not (the footprint rose since they were last warned).
    struct Rest: Equatable {
        let footprint: Int
        let level: PressureLevel
        let reclaimableArrivals: Int
        let registrations: Int
        /// Whether the apps were warned at this footprint: the run that began the rest warned them.
        let warned: Bool

        /// How far the footprint rises before the ladder runs again: 1/32 of the budget, at least
        /// 1 MiB.
        static func step(budgetBytes: Int) -> Int {
            max(1 << 20, budgetBytes / 32)
        }

        /// Whether the ladder should still rest at `footprint` and `level`, with the counts now.
        func holds(footprint: Int, level: PressureLevel, reclaimableArrivals: Int, registrations: Int, step: Int) -> Bool {
            footprint < self.footprint + step && level <= self.level
                && reclaimableArrivals == self.reclaimableArrivals && registrations == self.registrations
        }
    }

    init(
        apps: HostedApps, registry: PurgeRegistry, monitor: PressureMonitor, account: FootprintAccount, terminator: Terminator,
        journal: ReclamationJournal, warnings: WarningFollower, compressor: Compressor, configuration: MemorySystem.Configuration
    ) {
        self.apps = apps
        self.registry = registry
        self.monitor = monitor
        self.account = account
        self.terminator = terminator
        self.journal = journal
        self.warnings = warnings
        self.compressor = compressor
        self.configuration = configuration
        unrecoverable = configuration.unrecoverable.map { UnrecoverableClock(duration: $0.duration) }
        limits = AppLimitEnforcer(apps: apps, registry: registry, terminator: terminator, warnings: warnings, configuration: configuration)
    }

    var logger: Logger { configuration.logger }

    /// The budget in force: it follows the cgroup's limit.
    private var budget: MemoryBudget { monitor.budget }

    /// The time the ladder's runs are stamped with, the monitor's: samples taken before a run ended
    /// are told by it.
    private var clock: any LibraryClock { configuration.clock }

    /// The footprint the ladder works down to, in bytes, under the budget in force.
    var target: Int { configuration.targetBytes(under: budget) }

    mutating func handle(_ event: PressureEvent) async {
        switch event {
        case .change(let change):
            logger.log(level: change.level == .critical ? .notice : .info, "memory pressure \(change)", metadata: [
                "level": "\(change.level)", "previous": "\(change.previous)", "kind": "\(change.kind)",
                "footprint": "\(change.sample.footprintBytes.map(String.init) ?? "unknown")",
                "budget": "\(budget.totalBytes)",
            ])
            guard change.level > .normal else {
                crossingTime = nil
                rest = nil
                return
            }
            if change.kind == .fall {
                await climbIfAboveTarget(to: change.level, from: change.sample)
            } else if change.kind == .repeated, rest?.warned == true, isResting(at: change.sample, level: change.level) {
                // Nothing left to reclaim, and nothing changed: the apps had their warning, and a
                // repeat would only wake them to drop what they no longer hold.
                return
            } else {
                beginEpisode(at: change.sample)
                announced = true
                await climb(to: change.level, from: change.sample, warn: true)
            }
        case .budgetChanged(let change):
            // Caches sized by the budget follow it before the change is published.
            registry.followBudget(change.budget)
            journal.budgetChanged(change)
        case .sample(let sample, let level):
            defer { journal.handledSamples.emit(sample.time) }
            await limits.enforce(level: level, sample: sample)
            guard level > .normal else { return }
            await climbIfAboveTarget(to: level, from: sample)
            judgeRecovery(after: sample)
        }
    }

    /// Gives up, as the configuration says, once the footprint has stayed above the budget for its
    /// duration while the ladder rests with nothing left to reclaim.
    private mutating func judgeRecovery(after sample: MemorySample) {
        guard var clock = unrecoverable, let giveUp = configuration.unrecoverable else { return }
        let due = clock.observe(footprint: sample.footprintBytes, budgetBytes: budget.totalBytes, nothingLeft: rest != nil, at: sample.time)
        unrecoverable = clock
        guard let due else { return }
        journal.gaveUp(due)
        logger.error("memory footprint unrecoverable: \(due)", metadata: [
            "footprint": "\(due.footprintBytes)", "budget": "\(due.budgetBytes)", "action": "\(giveUp.action)",
        ])
        if case .exit(let code) = giveUp.action {
            logger.critical("exiting with status \(code) so that the process is restarted: \(due)")
            exit(code)
        }
    }

    /// Runs the ladder without warnings when `sample` is fresh and above target.
    private mutating func climbIfAboveTarget(to level: PressureLevel, from sample: MemorySample) async {
        if let lastRunEnd, sample.time < lastRunEnd { return }
        guard let footprint = sample.footprintBytes, footprint > target else {
            crossingTime = nil
            rest = nil
            return
        }
        if isResting(at: sample, level: level) { return }
        beginEpisode(at: sample)
        await climb(to: level, from: sample, warn: false)
    }

    /// Whether the ladder rests still at `sample` and `level`: it rests, and nothing it waits for
    /// has come (see ``Rest``).
    private func isResting(at sample: MemorySample, level: PressureLevel) -> Bool {
        guard let rest, let footprint = sample.footprintBytes else { return false }
        return rest.holds(
            footprint: footprint, level: level, reclaimableArrivals: apps.reclaimableArrivals, registrations: registry.registrations,
            step: Rest.step(budgetBytes: budget.totalBytes)
        )
    }

    /// Starts an episode, unless one is under way: its purge latency runs from the earliest of the
    /// allocation that crossed a threshold and `sample`, the first over the threshold or the target.
    private mutating func beginEpisode(at sample: MemorySample) {
        guard crossingTime == nil else { return }
        crossingTime = min(sample.time, account.claimCrossing() ?? sample.time)
    }

    /// One run of the ladder up to `level`. `warn` marks a run for an announcement (a rise or a
    /// repeat): its purge and its outcome are logged at `info`. Runs for later samples are logged at
    /// `debug`, except the one that brings an announced episode back under target, so sustained
    /// pressure costs a few lines per announcement, not one per sample.
    private mutating func climb(to level: PressureLevel, from sample: MemorySample, warn: Bool) async {
        let announced = self.announced
        var run = LadderRun(
            level: level, crossingTime: crossingTime ?? sample.time, startTime: clock.now, endTime: clock.now,
            footprintBeforeBytes: sample.footprintBytes, footprintAfterBytes: nil, targetBytes: target,
            steps: [], latency: nil
        )
        purge(for: level, into: &run, logLevel: warn ? .info : .debug)
        if warn {
            postWarnings(level, sample: sample, into: &run)
        }
        var footprint = LadderFootprint(monitor.measure())
        if level == .critical {
            footprint = compress(while: footprint, into: &run)
            // The least important band first; within a band, suspended apps before background ones.
            // With every app in one band this is the suspended step, then the background step.
            var passedOver: [App]? = []
            for band in AppImportance.allCases {
                for state in [AppState.suspended, .background] {
                    let inBand = apps.apps(in: [state]).filter { $0.configuration.importance == band && !$0.configuration.isProtected }
                    footprint = await terminate(inBand, in: state, while: footprint, passingOver: &passedOver, into: &run)
                }
            }
            // The process apps passed over, each holding too little to count, come last: together
            // they may.
            var lastResort: [App]? = nil
            for state in [AppState.suspended, .background] {
                let left = passedOver?.filter { $0.systemState == state } ?? []
                footprint = await terminate(left, in: state, while: footprint, passingOver: &lastResort, into: &run)
            }
        }
        if run.steps.contains(where: { !$0.terminated.isEmpty }) {
            // The terminations were measured with the other children as last read: every running
            // one is read again now, once for the run.
            footprint = footprint.confirmed(by: monitor.measure(.changing))
        }
        if level == .critical { reportProtectedAppsAboveTarget(footprint) }
        run.endTime = clock.now
        lastRunEnd = run.endTime
        run.footprintAfterBytes = footprint.bytes
        if let bytes = footprint.bytes, bytes <= target {
            run.latency = footprint.time - run.crossingTime
            crossingTime = nil
        }
        noteRest(after: run, level: level, footprint: footprint.bytes)
        let closesAnnouncedEpisode = announced && run.latency != nil
        logger.log(level: warn || closesAnnouncedEpisode ? .info : .debug, "reclamation ladder ran", metadata: [
            "level": "\(level)", "footprint": "\(run.footprintAfterBytes.map(String.init) ?? "unknown")",
            "target": "\(target)", "latency": "\(run.latency.map { "\($0)" } ?? "above target")",
            "steps": "\(run.steps.map(\.step.description).joined(separator: ","))",
        ])
        journal.ran(run)
    }

    /// Says once, while it lasts, that the protected apps alone hold more than the target: the
    /// ladder terminates every other app it may, and cannot bring the footprint under it.
    private mutating func reportProtectedAppsAboveTarget(_ footprint: LadderFootprint) {
        guard let bytes = footprint.bytes, bytes > target else { return }
        let protected = apps.apps(in: [.active, .inactive, .background, .suspended]).filter(\.configuration.isProtected)
        let held = protected.reduce(0) { $0.addingClamped(registry.footprint(of: $1.identifier).totalBytes) }
        let above = held > target
        defer { protectedAboveTargetReported = above }
        guard above, !protectedAboveTargetReported else { return }
        logger.warning("the protected apps alone hold more than the target; the ladder terminates only the others", metadata: [
            "protected": "\(protected.map(\.identifier.rawValue).sorted())", "protectedBytes": "\(held)", "target": "\(target)",
            "footprint": "\(bytes)",
        ])
    }

    /// Rests after a run that ended above target having reclaimed nothing (no bytes purged, no app
    /// terminated), saying so once; any other run ends the rest.
    private mutating func noteRest(after run: LadderRun, level: PressureLevel, footprint: Int?) {
        let reclaimedNothing = run.steps.allSatisfy { $0.releasedBytes == 0 && $0.terminated.isEmpty }
        guard run.latency == nil, reclaimedNothing, let footprint else {
            rest = nil
            return
        }
        let wasResting = rest != nil
        rest = Rest(
            footprint: footprint, level: level, reclaimableArrivals: apps.reclaimableArrivals, registrations: registry.registrations,
            warned: run.steps.contains { $0.step == .warning }
        )
        guard !wasResting else { return }
        logger.notice("reclamation ladder rests: nothing left to reclaim above target", metadata: [
            "level": "\(level)", "footprint": "\(footprint)", "target": "\(target)",
            "until": .string(
                "the footprint rises by \(Rest.step(budgetBytes: budget.totalBytes)) bytes, the level rises, "
                    + "or an app, cache, store or heap is added"
            ),
        ])
    }

    /// The threads that return the purge step's pages: one per online core, at most 4. Two
    /// threads returned 1 GiB in about 0.7 of one thread's time on this project's two-core
    /// machines; more were not measured.
    static let purgeThreads = min(max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))), 4)

    /// Purges the caches and stores of suspended and background apps (every app's at critical), and
    /// those of owners that are not hosted apps (a service's own caches) or are not running (a
    /// terminated app's caches kept by others), then returns freed pages
    /// to the operating system, every arena at once, on ``purgeThreads`` threads.
    private func purge(for level: PressureLevel, into run: inout LadderRun, logLevel: Logger.Level) {
        let clock = ContinuousClock()
        let start = clock.now
        let states: Set<AppState> = level == .critical
            ? [.active, .inactive, .background, .suspended]
            : [.background, .suspended]
        let chosen = apps.apps(in: states)
        // The apps that run code are held out of suspension while the purge may call theirs
        // (eviction handlers, discard callbacks); the others' caches are purged without a call.
        let held = chosen.compactMap { app in app.holdSuspension().map { (app: app, hold: $0) } }
        let quiet = Set(chosen.map(\.identifier)).subtracting(held.map(\.app.identifier))
        let targets = chosen.map(\.identifier) + apps.notInUse(registry.owners)
        // The freed pages all go back in the one purge below, spread over the cores, rather than
        // a third of them on this thread as the frees coalesce runs of 8 MiB.
        var report = Jemalloc.deferringEagerPurges {
            registry.purge(level == .critical ? .critical : .warning, apps: targets, returningFreedPages: false, quietlyFor: quiet)
        }
        for (app, hold) in held { app.release(hold) }
        do { try Jemalloc.purgeAllArenas(threads: Self.purgeThreads) } catch { report.arenaPurgeFailures.append(error) }
        let duration = clock.now - start
        run.steps.append(.init(step: .purge, duration: duration, releasedBytes: report.releasedBytes, terminated: []))
        if !report.entries.isEmpty {
            logger.log(level: logLevel, "purged caches and stores", metadata: [
                "level": "\(level)", "bytes": "\(report.releasedBytes)", "apps": "\(targets.count)",
                "duration": "\(duration)",
            ])
        }
        journal.purged(report, step: .purge)
    }

    /// Posts a memory warning to every running app and goes on at once: the apps handle it on their
    /// own run loops while the ladder terminates, and the follower records the delivery. The step's
    /// duration is the time it took to post.
    private func postWarnings(_ level: PressureLevel, sample: MemorySample, into run: inout LadderRun) {
        let start = ContinuousClock.now
        let posted = MemoryWarning(level: level, sample: sample).post(to: apps.apps(in: [.active, .inactive, .background])) {
            registry.footprint(of: $0.identifier).totalBytes
        }
        warnings.follow(posted, step: .warning)
        run.steps.append(.init(step: .warning, duration: .now - start, releasedBytes: 0, terminated: []))
    }

    /// Whether reclaiming an app of `footprint` is pointless with `excessBytes` still to reclaim:
    /// it is a process app (its process measured) holding under 1 % of them, as a child frozen
    /// before it ran holds a few hundred KiB. An in-process app never is: its footprint counts only
    /// its heap and caches, and its termination frees its delegate's memory too, which no figure
    /// shows.
    static func isPointless(_ footprint: AppFootprint, toward excessBytes: Int) -> Bool {
        footprint.processBytes > 0 && footprint.totalBytes < excessBytes / 100
    }

    /// Terminates `apps` (those of one importance band in `state`), largest first, one at a time,
    /// re-measuring after each, until the footprint is under target or none is left. Returns the
    /// last measurement.
    ///
    /// With `passedOver` given, a process app under 1 % of what is still to be reclaimed
    /// (``isPointless(_:toward:)``) is not terminated but added to it: `climb` terminates those
    /// last, once every band and state was tried, since together they may count.
    ///
    /// A re-measurement reads the process's own figures and takes the process apps' children as
    /// last read (``MemorySystem/Configuration/childrenReadAfterEachVictim``): a victim's child
    /// leaves their sum as it is reaped, with the figure last read of it, and no other child is read
    /// again; ``climb(to:from:warn:)`` reads the running ones once at the end of the run.
    ///
    /// `climb` calls it for each band from the least important, and in each for suspended apps, then
    /// background ones. A call that terminates something appends one step to `run`
    /// (``ReclamationStep/terminateSuspended`` or ``ReclamationStep/terminateBackground``), so a run
    /// has one such step per band and state that terminated an app, in the order they ran; two
    /// consecutive steps of one kind are two bands, not merged. With every app in one band a run has
    /// at most one of each, as before bands existed.
    ///
    /// The candidates are ranked once per call, not once per victim: a suspended app's footprint
    /// does not change while it is suspended, and each termination takes only an app still in
    /// `state` (one that moved on since the ranking is left alone). A call made with the footprint
    /// already at or under target ranks nothing. Ranking lists the apps in `state` (n of them) and
    /// keeps those of `band`, reading no footprint, O(n); it reads the footprints of those k only
    /// (never a terminated app's or another band's) and heapifies them, O(k); each victim then costs
    /// O(log k), so a call that terminates v apps costs O(n + k + v log k). With every app in one
    /// band, that band's call has k = n, O(k + v log k) as before bands existed; each other band's
    /// call lists the apps and ranks none, O(n), and none runs once the footprint is under target.
    private func terminate(
        _ apps: [App], in state: AppState, while footprint: LadderFootprint, passingOver passedOver: inout [App]?,
        into run: inout LadderRun
    ) async -> LadderFootprint {
        guard footprint.bytes.map({ $0 > target }) ?? true else { return footprint }
        let clock = ContinuousClock()
        let start = clock.now
        let step: ReclamationStep = state == .suspended ? .terminateSuspended : .terminateBackground
        var footprint = footprint
        var terminated: [AppIdentifier] = []
        var returned = 0
        var candidates = VictimHeap(apps) { registry.footprint(of: $0.identifier).totalBytes }
        while !Task.isCancelled, footprint.bytes.map({ $0 > target }) ?? true, let victim = candidates.popLargest() {
            // A process app under 1 % of what is still to reclaim frees nothing that counts: it is
            // passed over while the rest of the ladder may free what does.
            if passedOver != nil, let bytes = footprint.bytes,
                Self.isPointless(registry.footprint(of: victim.identifier), toward: bytes - target)
            {
                passedOver?.append(victim)
                continue
            }
            let decision = footprint.decision(for: target)
            let record = await terminator.terminate(victim, reason: .systemPressure, step: step, from: [state], decision: decision)
            returned = returned.addingClamped(record?.returnedBytes ?? 0)
            // An app that moved on (to the foreground, say) since it was ranked is left alone.
            guard record != nil || victim.systemState == .notRunning else { continue }
            terminated.append(victim.identifier)
            // Measure only once what the app freed is back with the kernel, so that memory its
            // termination already freed never costs a second app.
            try? Jemalloc.purgeAllArenas()
            footprint = footprint.measuredAgain(monitor.measure(configuration.childrenReadAfterEachVictim), after: record)
        }
        if !terminated.isEmpty {
            run.steps.append(.init(step: step, duration: clock.now - start, releasedBytes: returned, terminated: terminated))
        }
        return footprint
    }
}

/// The footprint the ladder decides by: a measurement, and the bytes it counts, which after a
/// termination are never more than the footprint before it less what the victim returned.
///
/// A measurement taken just after a kill may not have seen the victim's memory go: a parent
/// cgroup's usage falls only as the kernel uncharges the dead child's pages, which can take a
/// moment after the reap. Deciding by such a figure would terminate a second app for memory the
/// first already returned (lmkd waits on the victim's pidfd and reads again for the same reason).
struct LadderFootprint {
    /// The last measurement.
    let sample: MemorySample
    /// The footprint counted, in bytes; nil when the measurement found none.
    let bytes: Int?
    /// The footprint measured before the run's first termination; nil while none was measured.
    let runBytes: Int?
    /// What the run's terminations returned so far, in bytes.
    let returnedBytes: Int

    init(_ sample: MemorySample) {
        self.init(sample: sample, bytes: sample.footprintBytes, runBytes: sample.footprintBytes, returnedBytes: 0)
    }

    private init(sample: MemorySample, bytes: Int?, runBytes: Int?, returnedBytes: Int) {
        self.sample = sample
        self.bytes = bytes
        self.runBytes = runBytes
        self.returnedBytes = returnedBytes
    }

    /// When the last measurement was taken.
    var time: ContinuousClock.Instant { sample.time }

    /// `measurement`, taken after the termination `record` tells of, counted at most at this
    /// footprint less what the terminated app returned.
    func measuredAgain(_ measurement: MemorySample, after record: TerminationRecord?) -> LadderFootprint {
        guard let measured = measurement.footprintBytes, let before = bytes, let runBytes else {
            return LadderFootprint(measurement)
        }
        let returned = record?.returnedBytes ?? 0
        return LadderFootprint(
            sample: measurement, bytes: min(measured, max(0, before - returned)), runBytes: runBytes,
            returnedBytes: returnedBytes.addingClamped(returned)
        )
    }

    /// The decision to terminate an app at this footprint for `target`; nil when no footprint was
    /// measured.
    func decision(for target: Int) -> TerminationRecord.LadderDecision? {
        bytes.map {
            TerminationRecord.LadderDecision(
                footprintBytes: $0, targetBytes: target, runFootprintBytes: runBytes ?? $0, earlierReturnedBytes: returnedBytes
            )
        }
    }

    /// `measurement`, taken at the end of a run with every running child read again, counted at most
    /// at this footprint: a measurement that has not yet seen the victims' memory go never undoes
    /// what ``measuredAgain(_:after:)`` counted them as returning.
    func confirmed(by measurement: MemorySample) -> LadderFootprint {
        guard let measured = measurement.footprintBytes, let counted = bytes else { return LadderFootprint(measurement) }
        return LadderFootprint(sample: measurement, bytes: min(measured, counted), runBytes: runBytes, returnedBytes: returnedBytes)
    }
}
