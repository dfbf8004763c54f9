#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import Synchronization
import SystemPackage
@_spi(Benchmarks) import MemoryPressureRuntime
@_spi(Benchmarks) import MemoryPressureMonitor
import MemoryPressureCaches
import MemoryPressureLifecycle
import MemoryPressureProcesses

// The path of data, in five steps:
// 1. The monitor's thread samples between waits in one epoll set and publishes `monitor.events`.
// 2. `run()` posts them to the ladder's mailbox (every announcement, the latest sample).
// 3. The ladder, on the reclamation thread, purges, warns apps on their run loops and terminates
//    through the Terminator, whose one call returns the termination's record.
// 4. Each app's `LifecycleStateMachine` decides under the app's lock and returns actions; its
//    events go to the system's `SystemAppHost`, then to users.
// 5. The journal keeps what reclamation did and publishes it on `events`.
//
// Locks. No user code and no call-out runs under a lock of ours, and the code checks it: every lock
// is a `LibraryLock` (or a `ThreadCondition`), which counts the locks a thread holds in debug builds,
// and every call into code not ours goes through `callOut`, which traps there when one is held. An
// app's changes are made under its record's lock and return their effects in its outbox
// (App+Events.swift), delivered in order once the lock is released: to the app's host first
// (`SystemAppHost`: the state index, limits, the Terminator's heap closing and record), then to the
// public observers; then a terminated app's release. The only nesting starts at an app's record lock, taken first; under it,
// briefly: its notification registry's (and under that, to queue a resumed app's steps, the run-loop
// pool's), the deadline timers', the run-loop pool's, a completion's, a termination's part (the
// Terminator's book, kept as the termination is decided). Every other lock is taken alone.
//
// Concurrency: sixteen mechanisms, in four groups, each for a reason.
// Shared state:
// 1. `LibraryLock`: every shared state, held briefly, never across a call-out (see above).
// 2. `Atomic`: what hot paths read without a lock (app states, heap and footprint counts).
// 3. The outbox of each app: effects decided under its lock, delivered after it, in order.
// Threads, each owned by what started it and stopped with it, each sleeping in the kernel, off the
// cooperative pool, so that a saturated service still reclaims:
// 4. The monitor's sampling thread (epoll on its kernel events), per `run()`.
// 5. The reclamation executor (a task executor on a thread of its own), per `run()`.
// 6. The system's `AppThreadGroup`: the deadline timers' thread (one heap, `poll` on a wake pipe;
//    beside the monitor's, so that a service's slow observer or source cannot hold up a deadline:
//    DeadlinesBesideTheMonitorTests) and
// 7. the run-loop pool: each app's serial executor, on a bounded pool of workers that grows past
//    blocked callbacks; both stopped by `shutDown()` and as the system goes away.
// 8. The process apps' exit watch (one thread polls every child's pidfd), while children run.
// 9. `ThreadCondition` and `ThreadSemaphore`: where those threads, and an admission waiting for
//    room on a thread, sleep.
// Tasks:
// 10. Structured concurrency: task groups in `run()` and `shutDown()`.
// 11. `Completion`: a continuation a thread's event resumes (a transition's end, a termination's
//     record, a warning's receipt), bounded by a deadline of the group's timers.
// 12. `LadderMailbox`: the one reader of the monitor's announcements and latest sample.
// 13. `RoomSignal`: allocations waiting for room, threads and suspended tasks alike.
// 14. `EventSource`: the public observers and `AsyncStream`s.
// Devices, each on one measured path:
// 15. A thread-local charge stock (`ChargeStock`'s pthread key) and an unretained heap core
//     (`Unmanaged`) keep `HeapBuffer` near `malloc`'s cost.
// 16. A crossing allocation's `sched_yield` lets the woken monitor run first on kernels without
//     preemption.

/// The conductor: owns the pressure monitor, the apps, the purge registry, the state archive and
/// the reclamation ladder, and gives memory back when the footprint runs over the budget.
///
/// ```swift
/// let system = try MemorySystem(configuration: .init(budget: try .resolve(.automatic())))
/// let photos = try system.register(try AppIdentifier("photos")) { PhotosDelegate(system: system) }
/// try await photos.launch()
/// try await system.run()   // until the task is cancelled
/// ```
///
/// While ``run()`` runs, the system follows the ladder (see ``ReclamationStep``):
/// 1. an app entering the background has its caches purged per category and its backing stores
///    released;
/// 2. at the warning level, the caches and stores of suspended and background apps are purged,
///    freed pages are returned to the operating system, and every running app is sent a memory
///    warning (delegate, view controllers, observers);
/// 3. at the critical level, every app's caches and stores are purged, then apps are terminated
///    one at a time, re-measuring after each, until the footprint is under the target: the least
///    important band (``/MemoryPressureLifecycle/AppConfiguration/importance``) first; within a band, suspended apps before
///    background apps (which get `willTerminate`), largest footprint first within each. The active
///    app is never terminated for system pressure, whatever its band.
///
/// Per-app limits (``AppMemoryLimits``) are checked on every sample. Every termination, whatever
/// its reason, is recorded (``terminations``) once the app's run loop has let go of its memory.
public final class MemorySystem: Sendable {
    /// How the system samples, judges and reclaims.
    public let configuration: Configuration
    /// The footprint the ladder works down to, in bytes: the target ratio of ``budget``.
    public var targetBytes: Int { configuration.targetBytes(under: budget) }
    /// The budget in force: ``Configuration/budget`` until the cgroup's limit moves it
    /// (``MemorySystemEvent/budgetChanged(_:)``; see ``/MemoryPressureMonitor/PressureMonitor/Configuration/limitCheckInterval``).
    public var budget: MemoryBudget { monitor.budget }
    /// The monitor the system judges pressure with; its ``/MemoryPressureMonitor/PressureMonitor/events`` carry every
    /// sample and every announcement of the level.
    public let monitor: PressureMonitor
    /// Every app's heap, caches and stores.
    package let registry: PurgeRegistry
    /// Where apps save their state, when the configuration names a directory.
    package let stateArchive: StateArchive?
    /// The lifecycle events of every app the system hosts.
    public let lifecycleEvents = EventSource<LifecycleEvent>()

    let hosted = HostedApps()
    /// The process apps and their children.
    let processes: ProcessApps
    let journal = ReclamationJournal()
    let terminator: Terminator
    /// Purges an app entering the background, while the system runs.
    let backgroundPurge: BackgroundPurge
    /// Every app's host: the system's work at each app's lifecycle points.
    let host: SystemAppHost
    /// The ladder's compression step's hands.
    let compressor: Compressor
    /// The threads the apps' run loops and every deadline run on: the system's own, stopped by
    /// ``shutDown()`` and as the system goes away. Its deadlines follow the configuration's clock.
    let threads: AppThreadGroup
    /// The footprint between samples, kept on the heaps' allocation path, and their admission.
    let account: FootprintAccount
    /// Whether ``run()`` runs: one at a time.
    private let isRunning = Atomic<Bool>(false)
    var logger: Logger { configuration.logger }

    /// A system with no apps, not yet running. Creates the state archive's directory when the
    /// configuration names one.
    ///
    /// - Parameter configuration: The budget, the target, the monitor's settings and where state is
    ///   saved.
    /// - Throws: When the target is out of range, the ``Configuration/unrecoverable`` duration is
    ///   not positive, ``Configuration/warningTimeout`` or ``Configuration/admissionWait`` is
    ///   outside ``Configuration/acceptedWaits``, or the state archive's directory cannot be used.
    public init(configuration: Configuration) throws(MemoryPressureError) {
        try configuration.checkTarget()
        var configuration = configuration
        configuration.logger = configuration.logger.callingOut
        configuration.monitor.logger = configuration.monitor.logger.callingOut
        self.configuration = configuration
        threads = AppThreadGroup(clock: configuration.clock)
        let journal = journal
        account = FootprintAccount(
            budget: configuration.budget, admissionWait: configuration.admissionWait, timers: threads.timers, logger: configuration.logger
        ) { app, bytes in
            journal.refused(app: app, bytes: bytes)
        }
        let hosted = hosted
        // Weakly: the apps' delegates hold the process apps, which must not hold the apps.
        let processes = ProcessApps(warningTimeout: configuration.warningTimeout, logger: configuration.logger) { [weak hosted] app, reason in
            hosted?.app(app)?.endAtOnce(reason: reason)
        }
        self.processes = processes
        registry = PurgeRegistry(account: account, budgetBytes: configuration.budget.totalBytes, processes: processes)
        let compressor = Compressor(
            setting: configuration.compression, processes: processes, registry: registry, logger: configuration.logger,
            kernel: configuration.compressionKernel
        )
        self.compressor = compressor
        monitor = PressureMonitor(
            configuration: configuration.monitor, account: account,
            processes: SystemFootprintContributors(processes: processes, compressor: compressor)
        )
        stateArchive = try configuration.stateArchiveDirectory.map { directory throws(MemoryPressureError) in
            try StateArchive(directory: directory)
        }
        let terminator = Terminator(registry: registry, processes: processes, journal: journal, logger: configuration.logger)
        backgroundPurge = BackgroundPurge(registry: registry, journal: journal, logger: configuration.logger)
        self.terminator = terminator
        host = SystemAppHost(
            backgroundPurge: backgroundPurge, terminator: terminator, processes: processes, registry: registry, hosted: hosted,
            compressor: compressor
        )
    }

    deinit {
        threads.shutDown()
    }

    // MARK: Apps

    /// Registers an app that is not running yet.
    ///
    /// - Parameters:
    ///   - identifier: The app's name, unique in this system.
    ///   - appConfiguration: The app's deadlines and time limits.
    ///   - limits: The app's own soft and hard memory limits.
    ///   - makeDelegate: Makes the app's code afresh for each launch, as a process would, so a
    ///     terminated app gives back everything it held.
    /// - Returns: The app, not running.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/duplicateApp`` when an app
    ///   with this identifier is already registered, or
    ///   ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidIdentifier`` for ``/MemoryPressureRuntime/AppIdentifier/service``, which is
    ///   reserved for the service's own caches.
    public func register(
        _ identifier: AppIdentifier,
        configuration appConfiguration: AppConfiguration = .default,
        limits: AppMemoryLimits = .none,
        makeDelegate: @escaping @Sendable () -> sending any AppDelegate
    ) throws(MemoryPressureError) -> App {
        guard identifier != .service else { throw .reservedIdentifier(identifier.rawValue) }
        return try hosted.add(identifier, limits: limits) {
            App(
                identifier: identifier, configuration: appConfiguration, events: lifecycleEvents,
                stateArchive: stateArchive, host: host, threads: threads, makeDelegate: makeDelegate
            )
        }
    }

    /// Registers an app that runs `process`: a child process with the app's states, callbacks,
    /// deadlines, warnings and place on the ladder (see <doc:ProcessesAsApps>).
    ///
    /// Its launch starts the process, in a memory cgroup and a freezer cgroup of its own where the
    /// machine lets the system make them; its suspension freezes it and its return to the
    /// foreground thaws it; its `oom_score_adj` follows its state and
    /// ``/MemoryPressureLifecycle/AppConfiguration/importance``; its footprint is its process's, counted in the system's; its
    /// callbacks reach the process through `options.channel`; its termination sends `willTerminate`
    /// and `SIGTERM` to a running process and kills it at its deadline, or at once when suspended.
    /// A process that ends by itself terminates the app (reason
    /// ``/MemoryPressureLifecycle/TerminationReason/processExited`` or ``/MemoryPressureLifecycle/TerminationReason/processKilled``), and the next
    /// launch sees it in ``/MemoryPressureLifecycle/LaunchOptions/previousTermination``.
    ///
    /// - Parameters:
    ///   - identifier: The app's name, unique in this system.
    ///   - process: What the app runs, checked now.
    ///   - appConfiguration: The app's deadlines, time limits and band.
    ///   - limits: The app's own soft and hard memory limits, held against its process's footprint.
    ///   - options: The callback channel, the background mode and the freezer.
    /// - Returns: The app, not running.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidConfiguration`` when
    ///   the executable cannot be found or run or the specification is malformed,
    ///   ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidArgument`` for a warning signal out of range, and the
    ///   errors of ``register(_:configuration:limits:makeDelegate:)``.
    public func register(
        _ identifier: AppIdentifier,
        process: ProcessSpecification,
        configuration appConfiguration: AppConfiguration = .default,
        limits: AppMemoryLimits = .none,
        options: ProcessAppOptions = ProcessAppOptions()
    ) throws(MemoryPressureError) -> App {
        guard identifier != .service else { throw .reservedIdentifier(identifier.rawValue) }
        guard hosted.app(identifier) == nil else { throw .duplicateApp(identifier) }
        try processes.register(identifier, specification: process, options: options, configuration: appConfiguration)
        let processes = processes
        do {
            return try hosted.add(identifier, limits: limits) {
                App(
                    identifier: identifier, configuration: appConfiguration, events: lifecycleEvents, stateArchive: stateArchive,
                    host: host, threads: threads, keepsRunningInBackground: options.inBackground == .run
                ) {
                    ProcessAppDelegate(processes: processes)
                }
            }
        } catch {
            processes.unregister(identifier)
            throw error
        }
    }

    /// Removes an app that is not running from this system, so that its identifier can be
    /// registered again: a process app whose command changed, say, as `mempressure supervise`'s
    /// reload does.
    ///
    /// The app object accepts no transition afterwards: a launch, or any other, throws. The state
    /// it archived stays in the state archive, so an app registered again under the same
    /// identifier restores it at its next launch. Caches and stores it registered stay registered
    /// until they are released, as after any termination.
    ///
    /// - Parameter identifier: The app's name.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidArgument`` when no
    ///   app is registered as `identifier`, and ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidTransition`` when it runs or is
    ///   suspended: terminate it first.
    public func unregister(_ identifier: AppIdentifier) throws(MemoryPressureError) {
        guard let app = hosted.app(identifier) else { throw .unregisteredIdentifier(identifier) }
        try app.unregister()
        hosted.remove(identifier)
        processes.unregister(identifier)
    }

    /// The process of `identifier`, a process app, while it runs.
    ///
    /// - Parameter identifier: The app's name.
    /// - Returns: Its process's id, footprint and freezer; nil when the app is not a process app or
    ///   its process does not run.
    public func process(of identifier: AppIdentifier) -> ProcessAppStatus? {
        processes.status(of: identifier)
    }

    /// The app registered as `identifier`.
    ///
    /// - Parameter identifier: The app's name.
    /// - Returns: The app, or nil when none is registered under `identifier`.
    public func app(_ identifier: AppIdentifier) -> App? {
        hosted.app(identifier)
    }

    /// Every registered app, in identifier order: a sorted copy, made on each call.
    public var apps: [App] {
        hosted.apps.sorted { $0.identifier < $1.identifier }
    }

    /// `identifier`'s footprint now: its heap's bytes plus its caches' declared costs outside the heap,
    /// plus its process's memory for a process app.
    ///
    /// - Parameter identifier: An app, or ``/MemoryPressureRuntime/AppIdentifier/service``.
    /// - Returns: Its footprint; zero bytes for an owner with nothing registered.
    public func footprint(of identifier: AppIdentifier) -> AppFootprint {
        registry.footprint(of: identifier)
    }

    /// Registers `cache` to be purged with its owner: per its category when the owning app enters
    /// the background and under pressure. A cache whose owner is not a hosted app (a service's own
    /// cache, owned by ``/MemoryPressureRuntime/AppIdentifier/service``), or is a hosted app that is not running, is purged
    /// per its category at every raised level. This is the one way to register a cache; it stays
    /// registered while something keeps it, across its owner's terminations and relaunches.
    /// Registering it again does nothing: it is counted in its owner's footprint and purged once.
    ///
    /// - Parameter cache: A ``/MemoryPressureCaches/PurgeableCache``, or any ``/MemoryPressureCaches/Purgeable``.
    public func register(_ cache: any Purgeable) {
        registry.register(cache)
    }

    /// `identifier`'s heap, made on first use: where the app's cache payloads and backing stores
    /// live, counted exactly as they are allocated and returned at once when the app is terminated.
    ///
    /// - Parameter identifier: The app (or ``/MemoryPressureRuntime/AppIdentifier/service``) the heap belongs to.
    /// - Returns: The heap; a terminated app gets a new one on its next use.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` (`allocationFailed`) when jemalloc cannot make the heap's
    ///   arena.
    public func heap(for identifier: AppIdentifier) throws(MemoryPressureError) -> AppHeap {
        do {
            return try registry.heap(for: identifier)
        } catch {
            throw .heapUnavailable(error, app: identifier)
        }
    }

    /// Registers `store` (a backing store) under `owner`: released when the owner enters the
    /// background, and under pressure when its view is not visible. Registering it again under the
    /// same owner does nothing.
    ///
    /// - Parameters:
    ///   - store: A ``/MemoryPressureCaches/BackingStore``, or any ``/MemoryPressureCaches/ReleasableStore``; it stays registered while kept.
    ///   - owner: The app whose state decides when the store is released.
    public func register(_ store: any ReleasableStore, owner: AppIdentifier) {
        registry.register(store, owner: owner)
    }

    // MARK: Records

    /// The terminations so far (the most recent 10,000), in the order the apps' run loops let go
    /// of their memory.
    public var terminations: [TerminationRecord] { journal.terminations }

    /// The most recent ladder runs (up to 1,000), oldest first.
    public var ladderRuns: [LadderRun] { journal.runs }

    /// The app-heap allocations refused so far (over an app's hard limit, or over the budget with
    /// no room made in time), by app.
    public var refusedAllocations: [AppIdentifier: Int] { account.refusedAllocations }

    /// The purge latencies of the ladder runs that brought the footprint under target.
    public var purgeLatency: PurgeLatencyStatistics { journal.latency }

    /// What the system does, as it does it: purges, warnings, terminations and ladder runs. The
    /// pressure level itself comes from ``/MemoryPressureMonitor/PressureMonitor/events`` on ``monitor``. Observers are
    /// called on the thread that emits: the reclamation task for purges, warnings and ladder runs,
    /// and the app's run loop for its termination.
    public var events: EventSource<MemorySystemEvent> { journal.events }

    // MARK: Running

    /// Starts the monitor and reclaims memory until the task is cancelled; then stops the monitor.
    /// One run at a time: once it has returned, the system can run again.
    ///
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/alreadyRunning`` when the
    ///   system runs already, or when the monitor cannot start.
    public func run() async throws(MemoryPressureError) {
        guard isRunning.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            throw .alreadyRunning()
        }
        defer { isRunning.store(false, ordering: .releasing) }
        // Every announcement and the latest sample, whatever a ladder run waits for.
        let pressure = LadderMailbox()
        let monitorObservation = monitor.events.observe { pressure.post($0) }
        defer { monitorObservation.cancel() }
        // On before the monitor starts: once a sample is out, apps entering the background are
        // purged.
        backgroundPurge.turn(on: true)
        defer { backgroundPurge.turn(on: false) }
        try monitor.start()
        account.holdBudget(true)
        defer {
            account.holdBudget(false)
            monitor.stop()
        }
        let executor = try ReclamationExecutor()
        let warnings = WarningFollower()
        // Reclamation runs on its own executor, never behind the service's work on the cooperative
        // pool. The mailbox ends when the task is cancelled.
        await withDiscardingTaskGroup { group in
            group.addTask(executorPreference: executor) { [journal, configuration] in
                await warnings.run(recordingIn: journal, timeout: configuration.warningTimeout)
            }
            group.addTask(executorPreference: executor) { [hosted, registry, monitor, account, terminator, journal, compressor, configuration] in
                var ladder = ReclamationLadder(
                    apps: hosted, registry: registry, monitor: monitor, account: account, terminator: terminator, journal: journal,
                    warnings: warnings, compressor: compressor, configuration: configuration
                )
                while let event = await pressure.next() {
                    await ladder.handle(event)
                }
                warnings.finish()
            }
        }
        await executor.stop()
    }
}

extension MemorySystem {
    /// How a memory system samples, judges and reclaims. Only the budget is required.
    public struct Configuration: Sendable {
        /// How the pressure monitor samples and judges; its budget is the system's budget.
        public var monitor: PressureMonitor.Configuration
        /// The footprint the ladder works down to, as a fraction of the budget: a low watermark
        /// below the warning threshold. Nil: the warning level's recovery threshold (70% of the
        /// budget with the standard thresholds).
        public var targetRatio: Double?
        /// How long the ladder waits for the apps to finish with a memory warning before it goes
        /// on: an app whose run loop is blocked cannot hold reclamation up. Default 2 s; zero to
        /// one hour (``acceptedWaits``, checked as the system is made).
        public var warningTimeout: Duration = .seconds(2)
        /// How long an app-heap allocation that would take the process past its budget waits for the
        /// ladder to make room before it is refused. Default 100 ms; zero (refused at once) to one
        /// hour (``acceptedWaits``, checked as the system is made).
        public var admissionWait: Duration = .milliseconds(100)
        /// The values ``warningTimeout`` and ``admissionWait`` may take: zero to one hour.
        public static let acceptedWaits: ClosedRange<Duration> = .zero ... .seconds(3600)
        /// What the system does when the footprint stays above the budget with nothing left to
        /// reclaim: nil (the default) to keep trying, or a bounded give-up that reports or exits.
        public var unrecoverable: Unrecoverable?
        /// Where apps save their state, or nil for no state archive.
        public var stateArchiveDirectory: FilePath?
        /// Whether the ladder compresses suspended apps' memory before it terminates any:
        /// ``Compression/automatic`` (the default: where a zram swap device is on) or
        /// ``Compression/off``.
        public var compression: Compression = .automatic
        /// Where the system logs level changes, purges and terminations.
        public var logger: Logger
        /// What the ladder reads again of the process apps' children after each termination:
        /// nothing, by default (the others as last read; the victim's figure leaves the sum with
        /// it), or every child, as the ladder once did: the reference a test holds the default to.
        package var childrenReadAfterEachVictim: ContributionReading = .nothing

        /// The defaults, judged against `budget`.
        ///
        /// - Parameters:
        ///   - budget: The memory the process may use (``/MemoryPressureMonitor/MemoryBudget/resolve(_:thresholds:)``).
        ///   - stateArchiveDirectory: Where apps save their state, or nil for none.
        ///   - logger: Where the system logs level changes, purges and terminations.
        public init(
            budget: MemoryBudget,
            stateArchiveDirectory: FilePath? = nil,
            logger: Logger = Logger(label: "MemoryPressure.MemorySystem")
        ) {
            self.monitor = PressureMonitor.Configuration(budget: budget, logger: logger)
            self.stateArchiveDirectory = stateArchiveDirectory
            self.logger = logger
        }

        /// The budget samples are judged against, as configured; ``MemorySystem/budget`` is the one
        /// in force, which follows the cgroup's limit.
        public var budget: MemoryBudget {
            get { monitor.budget }
            set { monitor.budget = newValue }
        }

        /// Where compression reads the swap devices and pages apps out: nil for the kernel's; a
        /// test's fake, for the ladder's policy.
        package var compressionKernel: Compressor.Kernel?

        /// The one clock the system's timing reads: the monitor's samples, intervals and limit
        /// checks, the apps' deadlines, the admission wait and the ladder's runs. The continuous
        /// clock, or a manual one a test steps.
        package var clock: any LibraryClock {
            get { monitor.clock }
            set { monitor.clock = newValue }
        }

        /// Checks that the target lies above zero and below the warning threshold, and that the
        /// waits lie in ``acceptedWaits``.
        func checkTarget() throws(MemoryPressureError) {
            let warning = budget.thresholds.ratios.warning
            let ratio = targetRatio ?? budget.thresholds.ratios.warningRecovery
            guard ratio > 0, ratio < warning else {
                throw .targetOutOfRange(ratio: ratio, warningRatio: warning)
            }
            // Its duration is a `var`, checked by its initializer only.
            if let unrecoverable, unrecoverable.duration <= .zero {
                throw .unrecoverableDurationNotPositive(unrecoverable.duration)
            }
            // A wait of `Duration.seconds(Int64.max)` trapped in the clock arithmetic of the
            // allocation that waited; a negative one could make the wait spin.
            for (setting, wait) in [("warningTimeout", warningTimeout), ("admissionWait", admissionWait)]
            where !Self.acceptedWaits.contains(wait) {
                throw .systemWaitOutOfRange(setting, wait)
            }
        }

        /// The target in bytes under `budget` (the configured one, or one that followed the limit).
        func targetBytes(under budget: MemoryBudget) -> Int {
            Int(Double(budget.totalBytes) * (targetRatio ?? budget.thresholds.ratios.warningRecovery))
        }
    }
}

extension MemorySystem {
    /// Terminates every app that is running or suspended, for reason `explicit`, as a service does
    /// when it shuts down, and returns their records.
    ///
    /// Running apps (inactive, active, background) get `willTerminate`, within their termination
    /// deadline, to save their state (``/MemoryPressureLifecycle/App/saveState(_:)``); suspended apps are terminated at once,
    /// without a callback, as they saved theirs on entering the background. The apps are terminated
    /// together, so the whole takes about the longest deadline, not their sum.
    ///
    /// Returns once each app's run loop has let go of its memory, or its termination deadline has
    /// passed (such an app's record is added to ``terminations`` when its run loop drains), with
    /// the records in the order they came. Cancellation does not cut the shutdown short: a cancelled
    /// service still delivers `willTerminate` and waits for the records.
    ///
    /// Then it stops the system's threads (the apps' run loops' workers and the deadline timers'),
    /// waiting for them; once the system is also released, no thread of the library is left. Using
    /// the system afterwards starts them again.
    ///
    /// Call it after ``run()`` has returned, so the ladder does not terminate apps at the same time;
    /// an app launched after the call began is not terminated. Calls from several tasks at once
    /// terminate each app once, and each returns once the apps it found running are terminated,
    /// with their records.
    @discardableResult
    public func shutDown() async -> [TerminationRecord] {
        let records = await terminateEveryApp()
        processes.shutDown()
        // The joins wait for the threads to end: on a thread of their own, not the pool's.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let threads = threads
            do {
                let stopper = try PosixThread.start(named: "mp-shutdown") {
                    threads.shutDown()
                    callOut { done.resume() }
                }
                pthread_detach(stopper)
            } catch {
                threads.shutDown()
                done.resume()
            }
        }
        return records
    }

    /// Terminates every app that is running or suspended, for reason `explicit`, together; returns
    /// their records.
    private func terminateEveryApp() async -> [TerminationRecord] {
        let apps = hosted.appsInUse
        guard !apps.isEmpty else { return [] }
        logger.info("shutting down: terminating every app", metadata: [
            "running": "\(apps.filter(\.systemState.isRunning).count)",
            "suspended": "\(apps.filter { $0.systemState == .suspended }.count)",
        ])
        return await withTaskGroup(of: TerminationRecord?.self) { group in
            for app in apps {
                group.addTask {
                    await self.terminator.terminate(app, reason: .explicit, step: nil)
                }
            }
            var records: [TerminationRecord] = []
            for await record in group {
                if let record { records.append(record) }
            }
            return records
        }
    }
}
