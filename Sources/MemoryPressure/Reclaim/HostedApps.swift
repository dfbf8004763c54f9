import Synchronization

/// The apps a memory system hosts, each with its own limits.
final class HostedApps: Sendable {
    /// An app and its limits.
    struct Entry: Sendable {
        let app: App
        let limits: AppMemoryLimits
    }

    private let entries = Mutex<[AppIdentifier: Entry]>([:])
    /// The apps registered with limits: the only ones each sample checks.
    private let limited = Mutex<[Entry]>([])

    /// Adds the app `make` returns under `identifier`, unless one is there already.
    func add(_ identifier: AppIdentifier, limits: AppMemoryLimits, make: () -> App) throws(MemoryPressureError) -> App {
        try entries.withLock { entries throws(MemoryPressureError) in
            guard entries[identifier] == nil else { throw .duplicateApp(identifier) }
            let app = make()
            let entry = Entry(app: app, limits: limits)
            entries[identifier] = entry
            if limits != .none { self.limited.withLock { $0.append(entry) } }
            return app
        }
    }

    /// The app registered as `identifier`.
    func app(_ identifier: AppIdentifier) -> App? {
        entries.withLock { $0[identifier]?.app }
    }

    /// The apps registered with limits, in registration order.
    var withLimits: [Entry] {
        limited.withLock { $0 }
    }

    /// Every app, in no particular order.
    var apps: [App] {
        entries.withLock { $0.values.map(\.app) }
    }

    /// The limits `identifier` was registered with, or nil when it is not hosted.
    func limits(of identifier: AppIdentifier) -> AppMemoryLimits? {
        entries.withLock { $0[identifier]?.limits }
    }

    /// Whether `identifier` names a hosted app.
    func contains(_ identifier: AppIdentifier) -> Bool {
        entries.withLock { $0[identifier] != nil }
    }
}
