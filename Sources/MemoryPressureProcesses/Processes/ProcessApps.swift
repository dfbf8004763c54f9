#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import Synchronization
import MemoryPressureRuntime
import MemoryPressureWire
import MemoryPressureMeasurement
import MemoryPressureMonitor
import MemoryPressureLifecycle

/// The system's process apps and their children: what each runs, its running child with its
/// channel, and how its last child ended.
///
/// The app's delegate (``ProcessAppDelegate``) starts the child in `willFinishLaunching` and
/// carries the callbacks to it; the system's own observer of the lifecycle maps each state to the
/// kernel (``moved(_:from:to:)``) and kills the child as the app is terminated
/// (``terminated(_:)``); the exit watch turns a child that ends by itself into a termination.
///
/// The lock guards the tables only. Kernel calls on a child (freezing, signals, the kill, reading
/// its footprint) are made outside it. The children's footprints are kept in ``footprints``, whose
/// lock is taken inside this one as a child starts or ends, so that the two tables agree.
package final class ProcessApps: FootprintContributor {
    /// What a process app runs, registered once.
    private struct Registration: Sendable {
        let specification: ProcessSpecification
        let options: ProcessAppOptions
        let configuration: AppConfiguration
    }

    /// A running child and what speaks to it.
    package final class Running: Sendable {
        package let child: ChildProcess
        package let channel: ClientChannel?
        let pressureWatch: PressureWatchFIFO?
        /// Whether this child's launch grace was given (once per child, so once per launch).
        private let launchGraceGiven = Atomic<Bool>(false)

        /// True the first time only: the launch grace is this child's to take once.
        func takeLaunchGrace() -> Bool {
            !launchGraceGiven.exchange(true, ordering: .relaxed)
        }

        package init(child: ChildProcess, channel: ClientChannel?, pressureWatch: PressureWatchFIFO?) {
            self.child = child
            self.channel = channel
            self.pressureWatch = pressureWatch
        }
    }

    private struct State {
        var registrations: [AppIdentifier: Registration] = [:]
        /// The running children, by app. Changed only through ``setRunning(_:for:in:)``.
        private(set) var running: [AppIdentifier: Running] = [:]

        /// Sets (or, with nil, removes) `identifier`'s running child, and counts its footprint in
        /// `footprints` in place of whatever counted for `identifier` there (with nil, nothing
        /// does any more); returns the child it replaces.
        @discardableResult
        mutating func setRunning(_ child: Running?, for identifier: AppIdentifier, in footprints: ChildFootprints) -> Running? {
            let previous = running[identifier]
            running[identifier] = child
            if previous != nil || child != nil {
                running.shrinkIfSparse()
            }
            if let child = child?.child {
                // Its bytes in swap count at what they cost in memory: compressed memory is still memory.
                let swapCost = footprints.swapCost
                footprints.track(identifier) {
                    (try? child.footprint()).map { $0.bytes.addingClamped(swapCost.memoryCost(ofSwapped: $0.swappedBytes)) }
                }
            } else {
                footprints.remove(identifier)
            }
            return previous
        }
        /// Apps whose termination has begun: their child's own exit is the termination's, not news.
        var terminating: Set<AppIdentifier> = []
        /// How each app's last child ended, until its termination record takes it.
        var exits: [AppIdentifier: ProcessExit] = [:]
        /// How and when each app's last child ended, for its next launch's options.
        var lastEndings: [AppIdentifier: (exit: ProcessExit?, time: Double)] = [:]
    }

    private let state = LibraryLock(State())
    /// Every child's footprint, kept as the children start, freeze, thaw and end.
    package let footprints = ChildFootprints()
    private let exitWatch: ProcessExitWatch
    /// Whether it was said that protected apps cannot have -1000 here.
    private let protectedScoreFloorReported = Atomic<Bool>(false)
    /// Where the children are started, so that none outlives this process; nil (said in the
    /// log) when its pipe could not be made.
    private let spawner: ChildSpawner?
    private let logger: Logger
    /// How long a memory warning waits for a client child's answer.
    package let warningTimeout: Duration
    /// What a child's bytes in swap cost in memory, as the system last read its swap devices.
    package var swapCost: SwapCost { footprints.swapCost }
    /// Ends `app` at once for `reason`: its child ended by itself.
    private let endApp: @Sendable (AppIdentifier, TerminationReason) -> Void

    package init(warningTimeout: Duration, logger: Logger, endApp: @escaping @Sendable (AppIdentifier, TerminationReason) -> Void) {
        self.warningTimeout = warningTimeout
        self.logger = logger
        self.endApp = endApp
        exitWatch = ProcessExitWatch(logger: logger)
        do {
            spawner = try ChildSpawner(logger: logger)
        } catch {
            logger.error("children are started on their launching threads (\(error)): a child may outlive its host")
            spawner = nil
        }
    }

    /// Ends the spawner's thread and its guardian once no child runs (the system's shutdown); a
    /// later launch starts them again.
    package func shutDown() {
        guard state.withLock({ $0.running.isEmpty }) else { return }
        spawner?.stop()
    }

    /// A system let go with children still running: they are no longer watched, and go with their
    /// last reference (killed and reaped, their cgroups removed; see `ChildProcess`).
    deinit {
        for running in state.withLock({ Array($0.running.values) }) {
            exitWatch.forget(running.child)
        }
    }

    // MARK: Registration

    /// Registers `identifier` to run `specification`, checked now so that a bad one is a clear
    /// error before any launch.
    package func register(
        _ identifier: AppIdentifier, specification: ProcessSpecification, options: ProcessAppOptions, configuration: AppConfiguration
    ) throws(MemoryPressureError) {
        _ = try specification.validated()
        let options = try options.validated()
        let registration = Registration(specification: specification, options: options, configuration: configuration)
        let added = state.withLock { state in
            guard state.registrations[identifier] == nil else { return false }
            state.registrations[identifier] = registration
            return true
        }
        guard added else { throw .duplicateApp(identifier) }
    }

    /// Forgets `identifier`'s registration, when its app could not be added after all.
    package func unregister(_ identifier: AppIdentifier) {
        _ = state.withLock { $0.registrations.removeValue(forKey: identifier) }
    }

    /// `identifier`'s process now, while it runs.
    package func status(of identifier: AppIdentifier) -> ProcessAppStatus? {
        guard let running = running(identifier) else { return nil }
        let child = running.child
        return ProcessAppStatus(
            pid: child.pid, footprintBytes: footprints.bytes(of: identifier) ?? 0, isFrozen: child.isFrozen,
            freezeMechanism: child.freezeMechanism, controlGroups: child.controlGroupDirectories.map(\.string)
        )
    }

    /// `identifier`'s running child, if any.
    package func running(_ identifier: AppIdentifier) -> Running? {
        state.withLock { $0.running[identifier] }
    }

    /// `identifier`'s running child and the options it was registered with, if it runs.
    func runningWithOptions(_ identifier: AppIdentifier) -> (Running, ProcessAppOptions)? {
        state.withLock { state in
            guard let running = state.running[identifier], let registration = state.registrations[identifier] else { return nil }
            return (running, registration.options)
        }
    }

    /// How `identifier`'s last child ended, taken for its termination record.
    package func takeExit(of identifier: AppIdentifier) -> ProcessExit? {
        state.withLock { state in
            defer { state.exits.shrinkIfSparse() }
            return state.exits.removeValue(forKey: identifier)
        }
    }

    // MARK: Launch

    /// Starts `identifier`'s child, with its channel, in its cgroups, with the `oom_score_adj` of
    /// `state`; from its app's `willFinishLaunching`. A child already running (a launch after an
    /// exit not yet heard) is replaced. `saveState` keeps each state a client child saves.
    @discardableResult
    package func start(
        _ identifier: AppIdentifier, in appState: AppState, saveState: @escaping @Sendable ([UInt8]) throws(MemoryPressureError) -> Void = { _ in }
    ) throws(MemoryPressureError) -> Running {
        guard let registration = state.withLock({ $0.registrations[identifier] }) else {
            throw .notAProcessApp(identifier)
        }
        var environment: [String: String] = [:]
        var inherited: [Int32] = []
        let channel: ClientChannel?
        if registration.options.channel == .client {
            let logger = logger
            let made = try ClientChannel { state in
                do {
                    try saveState(state)
                } catch {
                    logger.warning("process app's saved state not kept", metadata: ["app": "\(identifier)", "bytes": "\(state.count)", "error": "\(error)"])
                }
            }
            environment[ClientChannel.environmentName] = ClientChannel.environmentValue(inheritedAt: inherited.count)
            environment[ClientProtocol.environmentName] = "\(ClientProtocol.version)"
            inherited.append(made.childDescriptor)
            channel = made
        } else {
            channel = nil
        }
        let pressureWatch = registration.options.channel == .systemd ? try PressureWatchFIFO(for: identifier) : nil
        if let pressureWatch {
            environment[PressureWatchFIFO.environmentName] = pressureWatch.path.string
        }
        let child = try ChildProcess.spawn(
            registration.specification.addingEnvironment(environment),
            options: ChildProcessOptions(freezeMechanism: registration.options.freezeMechanism, inheritedDescriptors: inherited),
            through: spawner,
            logger: logger
        )
        channel?.closeChildEnd()
        do {
            try child.setOOMScoreAdjustment(registration.configuration.oomScoreAdjustment(in: appState))
        } catch where registration.configuration.isProtected {
            // Only CAP_SYS_RESOURCE may set a process's oom_score_adj below its parent's: the child
            // keeps this host's, the lowest it may have here.
            if !protectedScoreFloorReported.exchange(true, ordering: .relaxed) {
                logger.notice("protected process apps keep this process's oom_score_adj: setting -1000 needs CAP_SYS_RESOURCE (\(error))")
            }
        } catch {
            logger.warning("process app's oom_score_adj not set", metadata: ["app": "\(identifier)", "error": "\(error)"])
        }
        let running = Running(child: child, channel: channel, pressureWatch: pressureWatch)
        let footprints = footprints
        let replaced = state.withLock { state in
            state.terminating.remove(identifier)
            state.exits[identifier] = nil
            return state.setRunning(running, for: identifier, in: footprints)
        }
        if let replaced { stop(replaced) }
        exitWatch.watch(child) { [weak self] termination in self?.ended(identifier, child: child, termination) }
        logger.info("started process app", metadata: [
            "app": "\(identifier)", "pid": "\(child.pid)", "freezer": "\(child.freezeMechanism)",
            "memory": "\(child.memoryMechanism)", "channel": "\(registration.options.channel)",
        ])
        return running
    }

    /// Logs that `identifier`'s child could not start; its app ends.
    func couldNotStart(_ identifier: AppIdentifier, _ error: MemoryPressureError) {
        logger.error("process app could not start its process", metadata: ["app": "\(identifier)", "error": "\(error)"])
    }

    /// A child that ended by itself: recorded, and its app ended, unless its termination has begun.
    private func ended(_ identifier: AppIdentifier, child: ChildProcess, _ termination: ChildTermination) {
        let exit = ProcessExit(termination)
        let footprints = footprints
        let news = state.withLock { state -> Bool in
            guard state.running[identifier]?.child === child else { return false }
            state.exits[identifier] = exit
            state.lastEndings[identifier] = (exit, Self.wallClockSeconds())
            guard !state.terminating.contains(identifier) else { return false }
            state.setRunning(nil, for: identifier, in: footprints)
            return true
        }
        guard news else { return }
        logger.notice("process app's process ended by itself", metadata: ["app": "\(identifier)", "pid": "\(child.pid)", "exit": "\(exit)"])
        endApp(identifier, exit.reason)
    }

    // MARK: The lifecycle, mapped to the kernel

    /// Follows `identifier` from `previous` to `next`: its `oom_score_adj` follows its state and
    /// band (-1000 when protected); it is frozen when suspended and thawed when it leaves suspension.
    package func moved(_ identifier: AppIdentifier, from previous: AppState, to next: AppState) {
        guard let (running, configuration) = state.withLock({ state -> (Running, AppConfiguration)? in
            guard let running = state.running[identifier], let registration = state.registrations[identifier] else { return nil }
            return (running, registration.configuration)
        }) else { return }
        let child = running.child
        do {
            if previous == .suspended, next != .notRunning {
                try child.thaw()
                footprints.thaw(identifier)
            }
            // A protected app's score, set at its start, is the same in every state.
            if next != .notRunning, !configuration.isProtected {
                try child.setOOMScoreAdjustment(configuration.oomScoreAdjustment(in: next))
            }
            if next == .suspended {
                try child.freeze()
                // It cannot change its memory now: read once, counted so until it is thawed.
                footprints.freeze(identifier)
            }
        } catch {
            logger.warning("process app's process did not follow its state", metadata: [
                "app": "\(identifier)", "pid": "\(child.pid)", "state": "\(next)", "error": "\(error)",
            ])
        }
    }

    /// Tells `identifier`'s child of a memory warning at `level` through its channel: the client's
    /// callback, answered within ``warningTimeout``; a byte in its `MEMORY_PRESSURE_WATCH` FIFO;
    /// or its signal. A child with no channel hears nothing.
    package func warn(_ identifier: AppIdentifier, level: PressureLevel) {
        guard let (running, channel) = state.withLock({ state -> (Running, ProcessAppOptions.Channel)? in
            guard let running = state.running[identifier], let registration = state.registrations[identifier] else { return nil }
            return (running, registration.options.channel)
        }) else { return }
        switch channel {
        case .none:
            break
        case .client:
            _ = running.channel?.call(.didReceiveMemoryWarning(MemoryWarningLevel(level)), timeout: warningTimeout)
        case .systemd:
            running.pressureWatch?.signal()
        case .signal(let number):
            try? running.child.signal(number)
        }
    }

    /// Notes that `identifier`'s termination has begun: its child's exit from now on is that
    /// termination's.
    func beginTerminating(_ identifier: AppIdentifier) {
        state.withLock { state in
            _ = state.terminating.insert(identifier)
        }
        // Read now, while it runs: its record gives what it held (a child that exits on `SIGTERM`
        // ends before its termination is recorded), and the ladder subtracts it.
        _ = footprints.bytes(of: identifier)
    }

    /// Kills `identifier`'s child as its app is terminated: `SIGKILL` through its pidfd,
    /// `process_mrelease`, reaped, its cgroups removed; its exit kept for the record, and the
    /// states it saved and no call read yet kept for its next launch.
    package func terminated(_ identifier: AppIdentifier) {
        let footprints = footprints
        let running = state.withLock { state in
            state.terminating.remove(identifier)
            return state.setRunning(nil, for: identifier, in: footprints)
        }
        guard let running else { return }
        let exit = stop(running)
        running.channel?.takeSavedStates()
        state.withLock { state in
            if let exit, state.exits[identifier] == nil { state.exits[identifier] = exit }
            state.lastEndings[identifier] = (state.exits[identifier], Self.wallClockSeconds())
        }
    }

    /// The options `identifier`'s child hears for a launch with `options`: the reason, how its
    /// previous child ended (with the exit the system saw, and when), and the restored state.
    package func clientLaunchOptions(for identifier: AppIdentifier, _ options: LaunchOptions) -> ClientLaunchOptions {
        let (reason, detail): (String, String?) =
            switch options.reason {
            case .user: ("user", nil)
            case .backgroundEvent(let event): ("backgroundEvent", event)
            case .url(let url): ("url", url)
            case .stateRestoration: ("stateRestoration", nil)
            }
        var launch = ClientLaunchOptions(reason: reason, reasonDetail: detail, restoredState: options.restoredState)
        if let previous = options.previousTermination {
            let ending = state.withLock { $0.lastEndings[identifier] }
            var termination = ClientLaunchOptions.PreviousTermination(reason: previous.rawValue, time: ending?.time)
            switch ending?.exit {
            case .exited(let status)?: termination.exitStatus = status
            case .signaled(let signal, _, _, _)?: termination.signal = signal
            case .unknown?, nil: break
            }
            launch.previousTermination = termination
        }
        return launch
    }

    /// The time now, in seconds since 1970 (UTC): when a child ended, as its next launch hears it.
    private static func wallClockSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Kills `running`'s child and waits for it to be reaped.
    @discardableResult
    private func stop(_ running: Running) -> ProcessExit? {
        exitWatch.forget(running.child)
        guard let termination = running.child.kill(timeout: .seconds(5)) else {
            logger.error("process app's process was not reaped within 5 s of SIGKILL", metadata: ["pid": "\(running.child.pid)"])
            return nil
        }
        return ProcessExit(termination)
    }

    // MARK: Memory

    /// Pages `identifier`'s child's memory out to swap (see ``ChildProcess/pageOut()``); returns the
    /// bytes advised, or nil when the app runs no child.
    ///
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with
    ///   ``/MemoryPressureRuntime/MemoryPressureError/Code/measurementUnavailable`` when the kernel
    ///   refuses the page-out here.
    package func compress(_ identifier: AppIdentifier) throws(MemoryPressureError) -> Int? {
        guard let running = running(identifier) else { return nil }
        return try running.child.pageOut()
    }

    /// `identifier`'s child's footprint: its cgroup's working set, or its resident set corrected by
    /// PSS; as read when it was frozen, while it is; 0 when it runs none.
    package func footprintBytes(of identifier: AppIdentifier) -> Int {
        footprints.bytes(of: identifier) ?? 0
    }

    /// The footprints of every child, for a sample (the running ones read now, the frozen ones as
    /// read when they were frozen) or as `reading` says; nil when there is none. The files are read
    /// outside the lock (about 20 µs a child through its cgroup), so launches, state changes and
    /// terminations never wait behind a sample.
    package func totalFootprintBytes(reading: ContributionReading) -> Int? {
        footprints.totalBytes(reading: reading)
    }
}
