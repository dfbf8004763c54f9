import Logging
import Synchronization

/// The conductor: owns the pressure monitor, the apps, the purge registry, the state archive and
/// the reclamation ladder, and gives memory back when the footprint runs over the budget.
///
/// ```swift
/// let system = try MemorySystem(configuration: .init(budget: try .resolve(.automatic())))
/// let photos = try system.register(try AppIdentifier("photos")) { PhotosDelegate(system.registry) }
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
/// 3. at the critical level, every app's caches and stores are purged, then suspended apps are
///    terminated, largest footprint first, one at a time, re-measuring after each, until the
///    footprint is under the target; then background apps, largest first, with `willTerminate`.
///    The active app is never terminated for system pressure.
///
/// Per-app limits (``AppMemoryLimits``) are checked on every sample. Every termination, whatever
/// its reason, is recorded (``terminations``) once the app's run loop has let go of its memory.
public final class MemorySystem: Sendable {
    /// How the system samples, judges and reclaims.
    public let configuration: Configuration
    /// The footprint the ladder works down to, in bytes.
    public let targetBytes: Int
    /// The monitor the system judges pressure with.
    public let monitor: PressureMonitor
    /// Every app's heap, caches and stores.
    public let registry = PurgeRegistry()
    /// Where apps save their state, when the configuration names a directory.
    public let stateArchive: StateArchive?
    /// The lifecycle events of every app the system hosts.
    public let lifecycleEvents = LifecycleEvents()

    let ledger = Mutex(Ledger())
    let broadcaster = EventBroadcaster<MemorySystemEvent>()
    var logger: Logger { configuration.logger }

    /// A system with no apps, not yet running. Creates the state archive's directory when the
    /// configuration names one; throws when the target or the directory cannot be used.
    public init(configuration: Configuration) throws(MemoryPressureError) {
        self.configuration = configuration
        targetBytes = try configuration.targetBytes()
        monitor = PressureMonitor(configuration: configuration.monitor)
        stateArchive = try configuration.stateArchiveDirectory.map { directory throws(MemoryPressureError) in
            try StateArchive(directory: directory)
        }
        lifecycleEvents.addObserver { [weak self] event in self?.observe(event) }
    }

    // MARK: Apps

    /// Registers an app that is not running yet. `makeDelegate` makes its code afresh for each
    /// launch, as a process would, so a terminated app gives back everything it held.
    public func register(
        _ identifier: AppIdentifier,
        configuration appConfiguration: AppConfiguration = .default,
        limits: AppMemoryLimits = .none,
        makeDelegate: @escaping @Sendable () -> sending any AppDelegate
    ) throws(MemoryPressureError) -> App {
        try ledger.withLock { ledger throws(MemoryPressureError) in
            guard ledger.apps[identifier] == nil else { throw .duplicateApp(identifier) }
            let app = App(
                identifier: identifier, configuration: appConfiguration, events: lifecycleEvents,
                stateArchive: stateArchive, makeDelegate: makeDelegate
            )
            ledger.apps[identifier] = HostedApp(app: app, limits: limits)
            return app
        }
    }

    /// The app registered as `identifier`.
    public func app(_ identifier: AppIdentifier) -> App? {
        ledger.withLock { $0.apps[identifier]?.app }
    }

    /// Every registered app, in identifier order.
    public var apps: [App] {
        ledger.withLock { $0.apps.values.map(\.app) }.sorted { $0.identifier < $1.identifier }
    }

    /// `identifier`'s footprint now (see ``PurgeRegistry/footprint(of:)``).
    public func footprint(of identifier: AppIdentifier) -> AppFootprint {
        registry.footprint(of: identifier)
    }

    /// Registers `cache` with the registry, to be purged with its owner. A cache whose owner is not
    /// a registered app (a service's own cache) is purged per its category at every raised level.
    public func register(_ cache: any Purgeable) {
        registry.register(cache)
    }

    // MARK: Records

    /// The terminations so far (the most recent 10,000), in the
    /// order the apps' run loops let go of their memory.
    public var terminations: [TerminationRecord] {
        ledger.withLock { $0.terminations }
    }

    /// The most recent ladder runs (up to 1,000), oldest first.
    public var ladderRuns: [LadderRun] {
        ledger.withLock { $0.runs }
    }

    /// The purge latencies of the ladder runs that brought the footprint under target.
    public var purgeLatency: PurgeLatencyStatistics {
        ledger.withLock { $0.latency }
    }

    /// The events from now on. A reader that falls behind loses the oldest beyond `bufferLimit`.
    public func events(bufferLimit: Int = 1024) -> AsyncStream<MemorySystemEvent> {
        broadcaster.makeStream(bufferingPolicy: .bufferingNewest(bufferLimit))
    }

    func emit(_ event: MemorySystemEvent) {
        broadcaster.emit(event)
    }

    // MARK: Running

    /// Starts the monitor and reclaims memory until the task is cancelled; then stops the monitor.
    /// Throws when the monitor cannot start.
    public func run() async throws(MemoryPressureError) {
        let pressure = monitor.events(bufferLimit: 1024)
        let (enteringBackground, continuation) = AsyncStream.makeStream(of: AppIdentifier.self)
        ledger.withLock { $0.enteringBackground = continuation }
        defer {
            ledger.withLock { $0.enteringBackground = nil }
            continuation.finish()
        }
        try monitor.start()
        defer { monitor.stop() }
        // Both streams end when the task is cancelled.
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await app in enteringBackground {
                    self.purgeOnEnteringBackground(app)
                }
            }
            group.addTask {
                var ladder = ReclamationLadder(system: self)
                for await event in pressure {
                    await ladder.handle(event)
                }
            }
        }
    }

    /// Step 1 of the ladder: purges `identifier`'s caches per category and releases its stores.
    private func purgeOnEnteringBackground(_ identifier: AppIdentifier) {
        let report = registry.purge(.enteringBackground, apps: [identifier])
        guard !report.entries.isEmpty else { return }
        logger.debug("purged on entering the background", metadata: [
            "app": "\(identifier)", "bytes": "\(report.releasedBytes)",
        ])
        emit(.purge(report, step: .enteringBackground))
    }
}
