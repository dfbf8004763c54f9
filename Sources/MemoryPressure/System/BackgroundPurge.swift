import Logging
import Synchronization
import MemoryPressureCaches
import MemoryPressureLifecycle

/// Step 1 of the ladder: an app entering the background has its caches purged per category and its
/// backing stores released, and the freed pages go back to the operating system; while the system
/// runs.
///
/// The system's host (``SystemAppHost``) runs it on the app's run loop once the app's
/// `didEnterBackground` has returned and before the app can suspend, so it runs the app's eviction
/// handlers and discard callbacks every time (a purge that found the app suspended already kept its
/// discardable content), and its report is published once the discards it counts are done.
final class BackgroundPurge: Sendable {
    let registry: PurgeRegistry
    let journal: ReclamationJournal
    let logger: Logger
    /// Whether the system runs: apps entering the background are purged only then.
    private let isOn = Atomic<Bool>(false)

    init(registry: PurgeRegistry, journal: ReclamationJournal, logger: Logger) {
        self.registry = registry
        self.journal = journal
        self.logger = logger
    }

    /// Purges apps entering the background from now on (`true`), or no more (`false`).
    func turn(on: Bool) {
        isOn.store(on, ordering: .releasing)
    }

    /// Purges `app`'s caches and stores, if it is still in the background: an app brought back to
    /// the foreground meanwhile keeps them. The entry under way keeps the app from suspending while
    /// its eviction handlers and discard callbacks run.
    func purge(_ app: App) {
        guard isOn.load(ordering: .acquiring), app.systemState == .background else { return }
        let identifier = app.identifier
        let report = registry.purge(.enteringBackground, apps: [identifier])
        guard !report.entries.isEmpty else { return }
        logger.debug("purged on entering the background", metadata: [
            "app": "\(identifier)", "bytes": "\(report.releasedBytes)",
        ])
        journal.purged(report, step: .enteringBackground)
    }
}
