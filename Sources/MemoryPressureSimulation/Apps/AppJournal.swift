import MemoryPressure
import Synchronization

/// What the simulated apps saw, written from their run loops and read by the invariant checks and
/// the report: the states they saved and restored, which of their parts each memory warning
/// reached, and the memory they went without when the system refused an allocation.
final class AppJournal: Sendable {
    /// What one memory warning reached in one app.
    struct WarningReceipt: Hashable, Sendable {
        /// Times the delegate heard it.
        var delegates = 0
        /// The controllers in the app's tree when its delegate heard it.
        var expectedControllers = 0
        /// The warning observers the app had registered when its delegate heard it.
        var expectedObservers = 0
        /// Times each controller heard it, by controller number.
        var controllers: [Int: Int] = [:]
        /// Times each observer heard it, by observer number.
        var observers: [Int: Int] = [:]
    }

    /// The relaunches seen so far, and what they restored.
    struct Restorations: Hashable, Sendable {
        /// Launches of an app after it was terminated.
        var relaunches = 0
        /// Relaunches that found exactly the state saved last.
        var restored = 0
        /// Relaunches that found something else (or nothing) though a state had been saved.
        var lost = 0
    }

    private struct AppRecord {
        var launches = 0
        var isTerminated = false
        var lastSaved: SavedState?
    }

    private struct State {
        var apps: [AppIdentifier: AppRecord] = [:]
        var receipts: [ContinuousClock.Instant: [AppIdentifier: WarningReceipt]] = [:]
        var restorations = Restorations()
        var lostStates: [String] = []
        var appErrors: [String] = []
        var refusedBytes: [AppIdentifier: Int] = [:]
    }

    private let state = Mutex(State())

    /// An empty journal.
    init() {}

    // MARK: Launches and saved state

    /// Records a launch of `app` that restored `restored`, and returns the launch's number (1 for
    /// the first). A launch after a termination is a relaunch: it must restore the state saved last.
    func recordLaunch(of app: AppIdentifier, restored: SavedState?, failure: String?) -> Int {
        state.withLock { state in
            var record = state.apps[app] ?? AppRecord()
            record.launches += 1
            if record.isTerminated {
                record.isTerminated = false
                state.restorations.relaunches += 1
                if let saved = record.lastSaved {
                    if restored == saved {
                        state.restorations.restored += 1
                    } else {
                        state.restorations.lost += 1
                        let found = failure ?? restored.map { "launch \($0.launch)'s state" } ?? "no state"
                        state.lostStates.append("\(app) relaunched with \(found), not the state launch \(saved.launch) saved")
                    }
                }
            }
            state.apps[app] = record
            return record.launches
        }
    }

    /// Records that `app` saved `saved`.
    func recordSave(of app: AppIdentifier, _ saved: SavedState) {
        state.withLock { $0.apps[app, default: AppRecord()].lastSaved = saved }
    }

    /// Records that `app` was terminated: its next launch is a relaunch.
    func recordTermination(of app: AppIdentifier) {
        state.withLock { $0.apps[app, default: AppRecord()].isTerminated = true }
    }

    /// Records something a simulated app could not do (an allocation jemalloc could not make, a
    /// state it could not save).
    func recordError(_ message: String) {
        state.withLock { $0.appErrors.append(message) }
    }

    /// Records that `app` went without `bytes` the system refused it (past its hard limit, or past
    /// the budget with no room made in time): it skipped or shrank what it was allocating them for.
    /// A refusal is the system keeping its budget, not a failure of the app or of the system.
    func recordRefusal(of app: AppIdentifier, bytes: Int) {
        state.withLock { $0.refusedBytes[app, default: 0] += bytes }
    }

    /// The bytes each app went without, over all its refused allocations.
    var refusedBytes: [AppIdentifier: Int] { state.withLock { $0.refusedBytes } }

    /// The relaunches so far.
    var restorations: Restorations { state.withLock { $0.restorations } }

    /// One line for each relaunch that did not find the state saved last.
    var lostStates: [String] { state.withLock { $0.lostStates } }

    /// One line for each thing a simulated app could not do.
    var appErrors: [String] { state.withLock { $0.appErrors } }

    // MARK: Memory warnings

    /// Records that `app`'s delegate heard the warning raised at `warning`, when the app had
    /// `controllers` view controllers and `observers` warning observers.
    func recordDelegateWarning(_ warning: ContinuousClock.Instant, app: AppIdentifier, controllers: Int, observers: Int) {
        state.withLock { state in
            var receipt = state.receipts[warning, default: [:]][app] ?? WarningReceipt()
            receipt.delegates += 1
            receipt.expectedControllers = controllers
            receipt.expectedObservers = observers
            state.receipts[warning, default: [:]][app] = receipt
        }
    }

    /// Records that controller number `controller` of `app` heard the warning raised at `warning`.
    func recordControllerWarning(_ warning: ContinuousClock.Instant, app: AppIdentifier, controller: Int) {
        state.withLock { $0.receipts[warning, default: [:]][app, default: WarningReceipt()].controllers[controller, default: 0] += 1 }
    }

    /// Records that observer number `observer` of `app` heard the warning raised at `warning`.
    func recordObserverWarning(_ warning: ContinuousClock.Instant, app: AppIdentifier, observer: Int) {
        state.withLock { $0.receipts[warning, default: [:]][app, default: WarningReceipt()].observers[observer, default: 0] += 1 }
    }

    /// What the warning raised at `warning` reached, by app, forgotten once read.
    func takeReceipts(of warning: ContinuousClock.Instant) -> [AppIdentifier: WarningReceipt] {
        state.withLock { $0.receipts.removeValue(forKey: warning) ?? [:] }
    }
}
