import Synchronization

/// The apps a memory system hosts, each with its own limits, indexed by state.
///
/// The index follows each app's state changes (``moved(_:to:)``, called from the system's
/// lifecycle observer on the thread that moves the app), so the ladder, the warnings, the limits
/// and a shutdown look only at the apps in the states they act on: a terminated app (`notRunning`)
/// costs none of them anything, however many there are.
final class HostedApps: Sendable {
    /// An app and its limits.
    struct Entry: Sendable {
        let app: App
        let limits: AppMemoryLimits
    }

    private struct Index {
        var entries: [AppIdentifier: Entry] = [:]
        /// The apps in each state but `notRunning`.
        var byState: [AppState: [AppIdentifier: App]] = [:]
        /// The apps with limits that are not `notRunning`: the only ones each sample checks.
        var limitedInUse: [AppIdentifier: Entry] = [:]
    }

    private let index = Mutex(Index())
    /// How many times an app has moved into the background or suspension: each is one more app the
    /// ladder may purge or terminate, a change it waits for when it rests.
    private let reclaimableArrivalCount = Atomic<Int>(0)

    /// Adds the app `make` returns under `identifier`, unless one is there already.
    func add(_ identifier: AppIdentifier, limits: AppMemoryLimits, make: () -> App) throws(MemoryPressureError) -> App {
        try index.withLock { index throws(MemoryPressureError) in
            guard index.entries[identifier] == nil else { throw .duplicateApp(identifier) }
            let app = make()
            index.entries[identifier] = Entry(app: app, limits: limits)
            return app
        }
    }

    /// Moves `identifier` from `previous` to `state` in the index. Called for every state change of
    /// a hosted app, in the order the app makes them.
    func moved(_ identifier: AppIdentifier, from previous: AppState, to state: AppState) {
        index.withLock { index in
            guard let entry = index.entries[identifier] else { return }
            index.byState[previous]?[identifier] = nil
            if state != .notRunning {
                index.byState[state, default: [:]][identifier] = entry.app
            }
            if state == .background || state == .suspended {
                reclaimableArrivalCount.add(1, ordering: .relaxed)
            }
            if entry.limits != .none {
                index.limitedInUse[identifier] = state == .notRunning ? nil : entry
            }
        }
    }

    /// How many times an app has moved into the background or suspension so far.
    var reclaimableArrivals: Int { reclaimableArrivalCount.load(ordering: .relaxed) }

    /// The app registered as `identifier`.
    func app(_ identifier: AppIdentifier) -> App? {
        index.withLock { $0.entries[identifier]?.app }
    }

    /// The apps in any of `states` (by their last reported change), in no particular order.
    func apps(in states: some Sequence<AppState>) -> [App] {
        index.withLock { index in
            states.flatMap { index.byState[$0].map { Array($0.values) } ?? [] }
        }
    }

    /// The apps running or suspended: every state but `notRunning`.
    var appsInUse: [App] {
        apps(in: AppState.allCases.filter { $0 != .notRunning })
    }

    /// The apps with limits that are running or suspended, in no particular order.
    var withLimitsInUse: [Entry] {
        index.withLock { Array($0.limitedInUse.values) }
    }

    /// Every app, in no particular order.
    var apps: [App] {
        index.withLock { $0.entries.values.map(\.app) }
    }

    /// `owners` less the hosted apps, in no particular order.
    func notHosted(_ owners: Set<AppIdentifier>) -> [AppIdentifier] {
        index.withLock { index in owners.filter { index.entries[$0] == nil } }
    }

    /// The limits `identifier` was registered with, or nil when it is not hosted.
    func limits(of identifier: AppIdentifier) -> AppMemoryLimits? {
        index.withLock { $0.entries[identifier]?.limits }
    }
}
