import Synchronization
import MemoryPressureRuntime
import MemoryPressureLifecycle

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
        /// Every app registered, running or not: kept for as long as the system, so one word each.
        var apps: [AppIdentifier: App] = [:]
        /// The limits of the apps that have any (most have none).
        var limits: [AppIdentifier: AppMemoryLimits] = [:]
        /// The apps in each state but `notRunning`; each gives its storage back as it empties.
        var byState: [AppState: [AppIdentifier: App]] = [:]
        /// The apps with limits that are not `notRunning`: the only ones each sample checks.
        var limitedInUse: [AppIdentifier: Entry] = [:]
    }

    private let index = LibraryLock(Index())
    /// How many times an app has moved into the background or suspension: each is one more app the
    /// ladder may purge or terminate, a change it waits for when it rests.
    private let reclaimableArrivalCount = Atomic<Int>(0)

    /// Adds the app `make` returns under `identifier`, unless one is there already.
    func add(_ identifier: AppIdentifier, limits: AppMemoryLimits, make: () -> App) throws(MemoryPressureError) -> App {
        try index.withLock { index throws(MemoryPressureError) in
            guard index.apps[identifier] == nil else { throw .duplicateApp(identifier) }
            let app = make()
            index.apps[identifier] = app
            if limits != .none { index.limits[identifier] = limits }
            return app
        }
    }

    /// Removes `identifier`, which does not run, so that it can be added again.
    func remove(_ identifier: AppIdentifier) {
        index.withLock { index in
            index.apps[identifier] = nil
            index.limits[identifier] = nil
            index.limitedInUse[identifier] = nil
        }
    }

    /// Moves `identifier` from `previous` to `state` in the index. Called for every state change of
    /// a hosted app, in the order the app makes them.
    func moved(_ identifier: AppIdentifier, from previous: AppState, to state: AppState) {
        index.withLock { index in
            guard let app = index.apps[identifier] else { return }
            index.byState[previous]?[identifier] = nil
            index.byState[previous]?.shrinkIfSparse()
            if state != .notRunning {
                index.byState[state, default: [:]][identifier] = app
            }
            if state == .background || state == .suspended {
                reclaimableArrivalCount.add(1, ordering: .relaxed)
            }
            if let limits = index.limits[identifier] {
                if state == .notRunning {
                    index.limitedInUse[identifier] = nil
                    index.limitedInUse.shrinkIfSparse()
                } else {
                    index.limitedInUse[identifier] = Entry(app: app, limits: limits)
                }
            }
        }
    }

    /// How many times an app has moved into the background or suspension so far.
    var reclaimableArrivals: Int { reclaimableArrivalCount.load(ordering: .relaxed) }

    /// The app registered as `identifier`.
    func app(_ identifier: AppIdentifier) -> App? {
        index.withLock { $0.apps[identifier] }
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
        index.withLock { Array($0.apps.values) }
    }

    /// `owners` less the hosted apps that are running or suspended, in no particular order: the
    /// owners that are not hosted apps (a service's own caches), and the terminated apps whose
    /// caches or stores something outside them keeps.
    func notInUse(_ owners: Set<AppIdentifier>) -> [AppIdentifier] {
        index.withLock { index in
            owners.filter { owner in index.apps[owner] == nil || !index.byState.values.contains { $0[owner] != nil } }
        }
    }

    /// The limits `identifier` was registered with, or nil when it is not hosted.
    func limits(of identifier: AppIdentifier) -> AppMemoryLimits? {
        index.withLock { index in
            index.apps[identifier] == nil ? nil : index.limits[identifier] ?? AppMemoryLimits.none
        }
    }
}
