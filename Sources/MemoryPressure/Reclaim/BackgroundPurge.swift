import Logging

/// Step 1 of the ladder: an app entering the background has its caches purged per category and its
/// backing stores released, and the freed pages go back to the operating system.
struct BackgroundPurge: Sendable {
    let apps: HostedApps
    let registry: PurgeRegistry
    let journal: ReclamationJournal
    let logger: Logger

    /// Purges `identifier`'s caches and stores, if it is still in the background (or suspended) now:
    /// an app that came back to the foreground meanwhile keeps them. A running app is held out of
    /// suspension while its eviction handlers run; a suspended app's caches are purged without a
    /// call into it.
    func purge(_ identifier: AppIdentifier) {
        guard let app = apps.app(identifier) else { return }
        let hold = app.holdSuspension()
        defer { if let hold { app.release(hold) } }
        let state = app.systemState
        guard state == .background || state == .suspended else { return }
        let report = registry.purge(.enteringBackground, apps: [identifier], quietlyFor: hold == nil ? [identifier] : [])
        guard !report.entries.isEmpty else { return }
        logger.debug("purged on entering the background", metadata: [
            "app": "\(identifier)", "bytes": "\(report.releasedBytes)",
        ])
        journal.purged(report, step: .enteringBackground)
    }
}
