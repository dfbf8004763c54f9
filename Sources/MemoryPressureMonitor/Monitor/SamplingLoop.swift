#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MemoryPressureRuntime
import MemoryPressureMeasurement
import SystemPackage

/// The body of a monitor's sampling thread: sample, judge, publish, then wait in `poll` for the
/// next tick, a kernel event (a PSI trigger, a `memory.events` change, a v1 `memory.pressure_level`
/// notification, a write to a limit file), a request for a sample, or a request to stop.
struct SamplingLoop: Sendable {
    package let monitor: PressureMonitor
    package let control: SamplingControl
    var tracker: PressureLevelTracker
    /// When and at what footprint the allocator's statistics were last refreshed.
    private var lastFull: (time: Moment, footprint: Int?)?
    /// When and at what footprint the last sample was taken, to tell how fast the footprint grows.
    private var last: (time: Moment, footprint: Int?)?
    /// The OOM kills in the process's cgroup, from the samples' `memory.events`.
    private var oomKills = OOMKillCounter()
    /// When the cgroup's limits are read again, and what they decide.
    private var limits: LimitWatch

    private var configuration: PressureMonitor.Configuration { monitor.configuration }
    /// The time the loop reads: the configuration's clock.
    private let clock: any LibraryClock

    package init(monitor: PressureMonitor, control: SamplingControl) {
        self.monitor = monitor
        self.control = control
        let configuration = monitor.configuration
        clock = configuration.clock
        self.tracker = PressureLevelTracker(
            budget: configuration.budget,
            stallThresholds: configuration.stallThresholds,
            settleTime: configuration.settleTime,
            repeatInterval: configuration.repeatInterval
        )
        limits = LimitWatch(configuration: configuration, now: Moment(configuration.clock.now))
    }

    package mutating func run() {
        let watches = KernelEventWatches(trigger: configuration.stallTrigger, targets: configuration.controlGroupEvents)
        watches.log(to: configuration.logger)
        var nextTick = Moment(clock.now)
        // A full sample is due now (the first, a request, a kernel event), or at the next tick (a
        // kernel event within the fast interval of the last sample).
        var fullNow = true
        var fullAtTick = false
        var limitsChanged = false
        var limitWritten = false
        var limitFilesWritten: Set<FilePath> = []
        let wakePipe = pollfd(fd: control.wake.descriptor, events: Int16(POLLIN), revents: 0)
        // Made again only when a source ends.
        var descriptors = DescriptorWait([wakePipe] + watches.pollDescriptors)
        // Looks at the time asked for (`SamplingControl.requestLook`), taken before a wait that
        // does not block: answered in the pass after it, once that wait has taken the kernel events
        // ready when they were asked for and this pass has done what was due at its time.
        var looks: [@Sendable () -> Void] = []
        defer {
            for look in looks + control.endLooks() { callOut(look) }
        }
        while !control.isStopRequested {
            // The request is taken before the time is read: a sample asked for is taken at an
            // instant after the asking, never at one read before it.
            let requested = control.takeSampleRequest()
            let now = Moment(clock.now)
            if let due = limits.dueTime(eventPending: limitsChanged, limitWritten: limitWritten), now >= due {
                fullNow = apply(limits.check(at: now, written: limitFilesWritten, logger: configuration.logger)) || fullNow
                limitsChanged = false
                limitWritten = false
                limitFilesWritten = []
            }
            let due = now >= nextTick
            let full = requested || fullNow || (fullAtTick && due)
            if full || due {
                let sample = takeSample(full: full, at: now)
                nextTick = now + interval(after: sample)
                fullAtTick = false
            }
            fullNow = false
            for look in looks { callOut(look) }
            looks = control.takeLooks()

            let wakeTime = limits.dueTime(eventPending: limitsChanged, limitWritten: limitWritten).map { min(nextTick, $0) } ?? nextTick
            // On a manual clock the wait has no time limit: a step of the clock wakes the thread
            // through its wake pipe (``PressureMonitor``'s `onStep`), and it looks at the time again.
            let ready = descriptors.wait(
                milliseconds: looks.isEmpty ? WakePipe.milliseconds(until: clock.sleepDeadline(for: wakeTime.instant)) : 0
            )
            guard !ready.isEmpty else { continue }
            if ready.contains(where: { $0.fd == wakePipe.fd }) {
                control.wake.drain()
            }
            let wake = watches.take(ready.lazy.filter { $0.fd != wakePipe.fd }, logger: configuration.logger)
            if wake.sourceEnded {
                descriptors = DescriptorWait([wakePipe] + watches.pollDescriptors)
            }
            if let level = wake.pressureLevel {
                tracker.notice(level.pressureLevel, at: Moment(clock.now))
            }
            limitsChanged = limitsChanged || wake.controlGroupEvent
            limitWritten = limitWritten || wake.limitWritten
            limitFilesWritten.formUnion(wake.limitFilesWritten)
            if wake.sample {
                // Kernel events bring a sample at most once per fast interval: under heavy reclaim a
                // v1 cgroup signals its pressure level hundreds of times a second.
                let earliest = (last?.time ?? now) + min(configuration.fastInterval, configuration.interval)
                if Moment(clock.now) >= earliest {
                    fullNow = true
                } else {
                    nextTick = min(nextTick, earliest)
                    fullAtTick = true
                }
            }
        }
    }

    /// Applies what a reading of the limits decided: the sampler takes in the working set or stops,
    /// and a budget change is judged from the next sample and published. Returns whether that
    /// sample is due at once: when either changed.
    private mutating func apply(_ outcome: LimitWatch.Outcome) -> Bool {
        if let workingSet = outcome.workingSet {
            monitor.judgeControlGroupWorkingSet(workingSet.judged, aloneInControlGroup: workingSet.alone)
        }
        if let change = outcome.budgetChange {
            tracker.budget = change.budget
            monitor.changeBudget(change)
        }
        return outcome.workingSet != nil || outcome.budgetChange != nil
    }

    /// Takes a sample at `now`, the time the pass judged (cheap unless `full` or the refresh
    /// schedule calls for a full one), judges it and publishes any announcement, then the sample,
    /// which carries how long reading it took. A sample at an instant follows everything the pass
    /// had due by then (a limit check), so a test that steps the clock can wait for it.
    @discardableResult
    private mutating func takeSample(full: Bool, at now: Moment) -> MemorySample {
        // The sample's time is the clock's; how long reading it took is the machine's own time.
        let began = ContinuousClock.now
        var sample = monitor.sample(full ? .full : .cheap, at: now)
        if full || needsFullSample(after: sample) {
            if !full { sample = monitor.sample(.full, at: now) }
            lastFull = (sample.moment, sample.footprintBytes)
        }
        sample.samplingDuration = ContinuousClock.now - began
        if let reading = sample.cgroupEvents?.oomKill {
            countOOMKills(reading)
        }
        let change = tracker.update(with: sample)
        if let change {
            monitor.publish(.change(change))
        }
        monitor.publish(.sample(sample, level: tracker.level))
        return sample
    }

    /// Counts the kills a `memory.events` `oom_kill` reading adds, logging each increase once.
    private mutating func countOOMKills(_ reading: Int) {
        let previous = oomKills.lastReading
        let killed = oomKills.record(reading)
        guard killed > 0, let previous else { return }
        monitor.countOOMKills(killed)
        configuration.logger.warning(
            "the OOM killer ended \(killed) process\(killed == 1 ? "" : "es") in this service's memory cgroup (memory.events oom_kill \(previous) -> \(reading))"
        )
    }

    /// The time to the next sample: the fast interval while the footprint is above the warning
    /// threshold or grew faster than the configured rate since the last sample, else the interval.
    private mutating func interval(after sample: MemorySample) -> Duration {
        defer { last = (sample.moment, sample.footprintBytes) }
        let fast = min(configuration.fastInterval, configuration.interval)
        guard let footprint = sample.footprintBytes else { return configuration.interval }
        if footprint >= tracker.budget.bytes(enteringAbove: .warning) { return fast }
        if let last, let before = last.footprint, sample.moment > last.time {
            let elapsed = sample.moment - last.time
            let bytesPerSecond = Double(footprint - before) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            if bytesPerSecond >= Double(configuration.fastSamplingGrowthRate) { return fast }
        }
        return configuration.interval
    }

    /// Whether the allocator's statistics are due: the refresh interval has passed, or the cheap
    /// footprint moved by the refresh distance since the last full sample.
    private func needsFullSample(after cheap: MemorySample) -> Bool {
        guard let lastFull else { return true }
        if cheap.moment - lastFull.time >= configuration.allocatorRefreshInterval { return true }
        guard let footprint = cheap.footprintBytes, let previous = lastFull.footprint else { return false }
        return abs(footprint - previous) >= configuration.allocatorRefreshBytes
    }
}
