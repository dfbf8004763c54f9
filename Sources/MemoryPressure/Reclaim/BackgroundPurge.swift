import Logging

/// Step 1 of the ladder: an app entering the background has its caches purged per category and its
/// backing stores released, and the freed pages go back to the operating system.
struct BackgroundPurge: Sendable {
    let apps: HostedApps
    let registry: PurgeRegistry
    let journal: ReclamationJournal
    let logger: Logger

    /// Purges `identifier`'s caches and stores, if it is still in the background (or suspended) now:
    /// an app that came back to the foreground meanwhile keeps them.
    func purge(_ identifier: AppIdentifier) {
        guard let state = apps.app(identifier)?.systemState, state == .background || state == .suspended else { return }
        let report = registry.purge(
            .enteringBackground, apps: [identifier], quietlyFor: state == .suspended ? [identifier] : []
        )
        guard !report.entries.isEmpty else { return }
        logger.debug("purged on entering the background", metadata: [
            "app": "\(identifier)", "bytes": "\(report.releasedBytes)",
        ])
        journal.purged(report, step: .enteringBackground)
    }
}
