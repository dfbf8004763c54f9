import Logging
import Synchronization
import SystemPackage
import MemoryPressureRuntime
import MemoryPressureMeasurement

/// Samples the process's memory on its own thread, judges it against a budget, and announces the
/// pressure level.
///
/// A `MemorySystem` owns one (`MemorySystem.monitor`), made from
/// `MemorySystem.Configuration.monitor`, and runs it while `MemorySystem.run()` runs:
///
/// ```swift
/// let system = try MemorySystem(configuration: .init(budget: try .resolve(.automatic())))
/// let changes = system.monitor.events.stream()
/// Task { try await system.run() }
/// for await event in changes {
///     if case .change(let change) = event { print(change) }
/// }
/// ```
///
/// Every interval the monitor reads `/proc/self/statm` (the cheap path) and, as often as the
/// configuration asks, reads everything else (refreshing jemalloc's epoch at most every 10 s). Where
/// the kernel allows it arms a PSI trigger, watches the cgroup's `memory.events` (v2) and registers
/// for its `memory.pressure_level` notifications (v1), and samples at once when one of them fires.
/// Observers are called on the monitor's thread, one event at a time; they should return quickly.
public final class PressureMonitor: Sendable {
    /// How the monitor samples and judges.
    public let configuration: Configuration
    /// Every sample with the level it was judged at, and every announcement of the level. Observers
    /// are called on the monitor's thread; streams end when the monitor stops.
    public let events = EventSource<PressureEvent>()
    /// The one sampler, shared by the sampling thread and by those who measure between its ticks;
    /// it reads the sources with no lock held.
    private let sampler: MemorySampler
    private let latest: LibraryLock<(level: PressureLevel, sample: MemorySample?, budget: MemoryBudget)>
    private let oomKills = Atomic<Int>(0)
    private let sampling = LibraryLock(Sampling.stopped)
    /// The account whose admissions follow the budget, when a system owns the monitor.
    private let account: FootprintAccount?

    /// The sampling thread's control, while the thread runs.
    private var runningControl: SamplingControl? {
        sampling.withLock { sampling in
            guard case .running(let thread) = sampling else { return nil }
            return thread.control
        }
    }

    /// Whether the monitor samples: its thread, once made.
    private enum Sampling {
        case stopped
        /// A start is making the thread; a stop asked for meanwhile is carried out by that start.
        case starting(stopRequested: Bool)
        case running(SamplingThread)
    }

    /// A monitor that does nothing until ``start()``.
    ///
    /// SPI, not API: services get their monitor from `MemorySystem`, which starts and stops it in
    /// `MemorySystem.run()`. The Sampling suite runs a monitor alone, to measure its own CPU cost
    /// with no system around it.
    @_spi(Benchmarks) public init(configuration: Configuration) {
        var configuration = configuration
        configuration.logger = configuration.logger.callingOut
        self.configuration = configuration
        sampler = MemorySampler(sources: configuration.sources, logger: configuration.logger)
        latest = LibraryLock((.normal, nil, configuration.budget))
        account = nil
        wakeOnEveryStep()
    }

    /// Has every step of the configured clock wake the sampling thread, as ``DeadlineTimers`` has its
    /// thread woken, so that it looks at the time again; nothing for the continuous clock.
    private func wakeOnEveryStep() {
        configuration.clock.onStep { [weak self] in self?.wakeSamplingThread() }
    }

    /// Wakes the sampling thread, when it runs, to look at the time; asks for no sample.
    private func wakeSamplingThread() {
        runningControl?.wake.wake()
    }

    /// A monitor whose samples count `account`'s heap bytes and what `processes` contributes, and which
    /// `account` wakes at once when an allocation crosses a threshold.
    package init(configuration: Configuration, account: FootprintAccount, processes: any FootprintContributor) {
        var configuration = configuration
        configuration.logger = configuration.logger.callingOut
        self.configuration = configuration
        sampler = MemorySampler(sources: configuration.sources, account: account, processes: processes, logger: configuration.logger)
        latest = LibraryLock((.normal, nil, configuration.budget))
        self.account = account
        account.wake { [weak self] in self?.sampleNow() }
        wakeOnEveryStep()
    }

    /// Starts sampling on a thread of its own; the first sample is taken at once. Does nothing when
    /// already running.
    ///
    /// - Throws: When the configured interval, limit-check interval or fast-sampling growth rate is
    ///   not positive, the settle time or repeat interval is negative, or the thread cannot be made.
    ///
    /// SPI for the same reason as `init(configuration:)`.
    @_spi(Benchmarks) public func start() throws(MemoryPressureError) {
        for interval in [configuration.interval, configuration.fastInterval] where interval <= .zero {
            throw .monitorIntervalNotPositive(interval)
        }
        if let interval = configuration.limitCheckInterval, interval <= .zero {
            throw .limitCheckIntervalNotPositive(interval)
        }
        for (setting, duration) in [("settleTime", configuration.settleTime), ("repeatInterval", configuration.repeatInterval)]
        where duration < .zero {
            throw .monitorDurationNegative(setting, duration)
        }
        guard configuration.fastSamplingGrowthRate > 0 else {
            throw .fastSamplingGrowthRateNotPositive(configuration.fastSamplingGrowthRate)
        }
        let starts = sampling.withLock { sampling in
            guard case .stopped = sampling else { return false }
            sampling = .starting(stopRequested: false)
            return true
        }
        guard starts else { return }
        // Made with the lock released: the loop arms its kernel events and the thread starts, and
        // an allocation that crosses a threshold (`sampleNow()`) must not wait for that.
        let started: SamplingThread
        do throws(Errno) {
            let control = try SamplingControl()
            started = try SamplingThread(running: SamplingLoop(monitor: self, control: control), control: control)
        } catch {
            sampling.withLock { $0 = .stopped }
            throw .monitorCouldNotStart(error)
        }
        let stoppedMeanwhile = sampling.withLock { sampling in
            guard case .starting(stopRequested: false) = sampling else {
                sampling = .stopped
                return true
            }
            sampling = .running(started)
            return false
        }
        // A stop made while the thread started (an observer of its first sample may make it) is
        // carried out here.
        if stoppedMeanwhile { started.stop() }
    }

    /// Stops sampling, waits for the thread to end (its descriptors are closed with it), and ends
    /// every stream of ``events``. The monitor can be started again.
    ///
    /// SPI for the same reason as `init(configuration:)`.
    @_spi(Benchmarks) public func stop() {
        let running = sampling.withLock { sampling -> SamplingThread? in
            switch sampling {
            case .running(let thread):
                sampling = .stopped
                return thread
            case .starting:
                // The start under way stops the thread once it has made it.
                sampling = .starting(stopRequested: true)
                return nil
            case .stopped:
                return nil
            }
        }
        running?.stop()
        events.finishStreams()
    }

    /// Whether the monitor is sampling.
    package var isRunning: Bool {
        sampling.withLock { sampling in
            switch sampling {
            case .running, .starting(stopRequested: false): true
            case .starting(stopRequested: true), .stopped: false
            }
        }
    }

    /// The level last announced.
    public var level: PressureLevel { latest.withLock { $0.level } }

    /// The most recent sample, or nil before the first.
    public var latestSample: MemorySample? { latest.withLock { $0.sample } }

    /// The budget samples are judged against now: the configured one, until the cgroup's limit
    /// moves it (``PressureEvent/budgetChanged(_:)``).
    public var budget: MemoryBudget { latest.withLock { $0.budget } }

    /// Whether the footprint judged now takes in the cgroup's working set
    /// (``Configuration/controlGroupWorkingSet``).
    /// A source may read it while it is read.
    public var judgesControlGroupWorkingSet: Bool { sampler.judgesControlGroupWorkingSet }

    /// Starts or stops taking in the cgroup's working set, from the sampling thread, and says so.
    func judgeControlGroupWorkingSet(_ judges: Bool, aloneInControlGroup alone: Bool) {
        sampler.judgesControlGroupWorkingSet = judges
        let why = switch configuration.controlGroupWorkingSet {
        case .whenAlone: alone ? "the process is alone in its memory cgroup" : "the process shares its memory cgroup"
        case .always, .never: "configured \(configuration.controlGroupWorkingSet)"
        }
        configuration.logger.notice(judges
            ? "the footprint judged is the larger of the process's own and its cgroup's working set (\(why))"
            : "the footprint judged is the process's own (\(why))")
    }

    /// Makes `change`, from the sampling thread: the account admits against the new budget, and
    /// the change is logged and published.
    func changeBudget(_ change: BudgetChange) {
        account?.setBudget(change.budget)
        let written = change.writeDescription.map { "; \($0)" } ?? ""
        var metadata: Logger.Metadata = ["budget": "\(change.budget.totalBytes)", "limit": "\(change.limitBytes.map(String.init) ?? "none")"]
        if let delay = change.limitWriteDelay {
            metadata["limitWriteDelay"] = "\(delay)"
        }
        if change.isLoweredToTheLimit {
            configuration.logger.warning(
                "the memory budget exceeds the cgroup's limit; lowered to \(Int(MemoryBudget.Source.defaultRatio * 100))% of the limit: \(change)\(written)",
                metadata: metadata
            )
        } else {
            metadata["previousBudget"] = "\(change.previous.totalBytes)"
            metadata["previousLimit"] = "\(change.previousLimitBytes.map(String.init) ?? "none")"
            configuration.logger.notice("the memory budget follows the cgroup's limit: \(change)\(written)", metadata: metadata)
        }
        publish(.budgetChanged(change))
    }

    /// Processes the OOM killer ended in the process's cgroup v2 since the monitor first sampled it:
    /// the increases of `memory.events`' `oom_kill` it saw, each also logged once.
    package var oomKillCount: Int { oomKills.load(ordering: .relaxed) }

    /// Adds `count` kills to ``oomKillCount``, from the sampling thread.
    func countOOMKills(_ count: Int) {
        oomKills.add(count, ordering: .relaxed)
    }

    /// Asks the sampling thread for a full sample now rather than at the next interval. Returns at
    /// once; the sample is published as usual.
    func sampleNow() {
        sampling.withLock { sampling in
            if case .running(let thread) = sampling { thread.control.requestSample() }
        }
    }

    /// Returns once the sampling thread has taken every kernel event ready when called and done
    /// what was due at its clock's time then (a tick's sample, a limit check); at once when the
    /// monitor is not running. Asks for no sample: for tests that step a manual clock and assert
    /// what did not happen by then.
    package func lookedAtTheTimeNow() async {
        await withCheckedContinuation { (looked: CheckedContinuation<Void, Never>) in
            guard let control = runningControl else {
                looked.resume()
                return
            }
            control.requestLook { looked.resume() }
        }
    }

    /// Reads the sources now, on the calling thread, through the monitor's own sampler, with what
    /// `contributions` says of the process apps' children (by default, as a sample reads them);
    /// publishes nothing. A cheap reading that finds no footprint falls back to a full one.
    package func measure(_ contributions: ContributionReading = .changing) -> MemorySample {
        let sample = sampler.sample(.cheap, at: Moment(configuration.clock.now), contributions: contributions)
        return sample.footprintBytes == nil ? sampler.sample(.full, at: Moment(configuration.clock.now), contributions: contributions) : sample
    }

    /// Reads the sources `depth` covers at `moment`, for the sampling thread.
    func sample(_ depth: SampleDepth, at moment: Moment) -> MemorySample {
        sampler.sample(depth, at: moment)
    }

    /// Records `event` as the latest and passes it on.
    func publish(_ event: PressureEvent) {
        latest.withLock { latest in
            switch event {
            case .sample(let sample, let level):
                (latest.level, latest.sample) = (level, sample)
            case .change(let change):
                latest.level = change.level
            case .budgetChanged(let change):
                latest.budget = change.budget
            }
        }
        events.emit(event)
    }

    deinit {
        stop()
    }
}

extension PressureMonitor {
    /// How a monitor samples and judges. Only the budget is required.
    public struct Configuration: Sendable {
        /// The budget samples are judged against, as configured; ``PressureMonitor/budget`` is the
        /// one in force, which follows the cgroup's limit (see ``limitCheckInterval``).
        public var budget: MemoryBudget
        /// How often the cgroup's limit is read again while the monitor runs, so that the budget
        /// follows it: resolved again when it came from the limit, lowered when the limit falls below
        /// it (see ``MemoryBudget``). A write to a file that sets the limit (watched with inotify,
        /// v1 and v2) has it read at once, and so does a `memory.events` change (v2) or a
        /// `memory.pressure_level` notification (v1), at most every 100 ms. Nil keeps the configured budget. Default 10 s;
        /// more than zero (checked as the monitor starts).
        public var limitCheckInterval: Duration? = .seconds(10)
        /// Where the limits are read from: the process's own cgroup.
        package var limitsReader: MemoryLimitsReader = .current
        /// The time the monitor reads: its samples' times, its intervals, the limit checks and the
        /// notices' hold. The continuous clock, or a manual one a test steps (the sampling thread then
        /// samples when the clock is stepped past its next tick, and waits in between).
        package var clock: any LibraryClock = SystemClock()
        /// When the footprint judged takes in the cgroup's working set: by default while the process
        /// is alone in its memory cgroup, as in a container.
        public var controlGroupWorkingSet: ControlGroupWorkingSetPolicy = .whenAlone
        /// Time between samples. Default 250 ms.
        public var interval: Duration = .milliseconds(250)
        /// Time between samples while the footprint is above the warning threshold or growing
        /// faster than ``fastSamplingGrowthRate``, so that memory outside the app heaps is seen
        /// within this long of passing a threshold. Default 10 ms.
        public var fastInterval: Duration = .milliseconds(10)
        /// Growth of the footprint, in bytes per second between two samples, from which the monitor
        /// samples every ``fastInterval``: 1 or more (`Int.max`: only above the warning threshold).
        /// Default 64 MiB/s.
        public var fastSamplingGrowthRate: Int = 64 << 20
        /// Longest time between full samples (cgroup, PSI, allocator statistics). Default 1 s. The
        /// jemalloc epoch, whose refresh costs about 9 µs per arena, is refreshed at most every 10 s
        /// of these (see `JemallocSampleSource`).
        package var allocatorRefreshInterval: Duration = .seconds(1)
        /// A change of the cheap footprint at least this large since the last full sample makes the
        /// next sample a full one. Default 16 MiB.
        package var allocatorRefreshBytes: Int = 16 << 20
        /// How long a lower level must hold before the fall is announced. Default 5 s; zero or more.
        public var settleTime: Duration = .seconds(5)
        /// Time between repeated announcements at one level (zero: at every sample). Default 25 s;
        /// zero or more.
        public var repeatInterval: Duration = .seconds(25)
        /// Stall percentages that raise the level on their own; nil to ignore stall.
        public var stallThresholds: StallThresholds? = .standard
        /// The PSI trigger to arm, or nil to sample on the interval alone. systemd's
        /// `$MEMORY_PRESSURE_WATCH` and `$MEMORY_PRESSURE_WRITE` take precedence when set.
        public var stallTrigger: StallTrigger? = .standard
        /// The cgroup files whose kernel events wake the monitor: by default the process's own
        /// memory cgroup's `memory.events` (v2) or `memory.pressure_level` (v1). A v1 notification
        /// raises the level the way stall does (`medium` to warning, `critical` to critical, for
        /// ``PressureLevelTracker/noticeHoldTime``), unless ``stallThresholds`` is nil.
        package var controlGroupEvents: ControlGroupEventTargets = .processGroup
        /// Where samples come from. Default: statm, jemalloc, the cgroup and PSI.
        public var sources: [any MemorySampleSource] = Configuration.standardSources
        /// Where the monitor logs: one line per figure it cannot read, the kernel event sources it
        /// armed or could not arm, and each OOM kill in its cgroup.
        public var logger: Logger

        /// The process's own sources: statm, jemalloc, its cgroup and PSI.
        public static var standardSources: [any MemorySampleSource] {
            [ProcessMemorySampleSource(), JemallocSampleSource(), ControlGroupSampleSource(), PressureStallSampleSource()]
        }

        /// The defaults, judged against `budget`.
        ///
        /// - Parameters:
        ///   - budget: The budget samples are judged against.
        ///   - logger: Where the monitor logs; a logger labelled `MemoryPressure.PressureMonitor` by
        ///     default.
        public init(budget: MemoryBudget, logger: Logger = Logger(label: "MemoryPressure.PressureMonitor")) {
            self.budget = budget
            self.logger = logger
        }
    }
}
