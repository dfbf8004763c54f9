import DequeModule

/// The part of an app's lifecycle the system reads and changes from outside the app's run loop, so
/// that it can validate transitions and terminate an app whose run loop is blocked. Guarded by the
/// app's mutex.
struct LifecycleRecord {
    /// The state the system has moved the app to (its callbacks may still be queued): what the
    /// system decides by.
    var state = AppState.notRunning
    /// What `applicationState` reads while a delegate callback runs, as UIKit reports it (inactive
    /// while launching into the foreground, active in `willResignActive`, background in
    /// `willEnterForeground`, …); nil between callbacks, when the app reads ``state``.
    var callbackState: AppState?
    /// When the app entered the background this time: its background time is counted from here.
    /// Nil in the foreground and when not running.
    var backgroundSince: ContinuousClock.Instant?
    /// Ends the background time of this stay: runs the expiration handlers shortly before it runs
    /// out and terminates the app if a task is still open when it has. Nil when none is armed.
    var backgroundExpiry: DeadlineTimers.Token?
    /// The stay (its `backgroundSince`) whose expiration handlers have had their turn on the run
    /// loop: the expiry waits for it while the run loop only waits for a worker.
    var expirationHandlersBegan: ContinuousClock.Instant?
    /// Incremented at each termination: run-loop work of an earlier generation does nothing.
    var generation = 0
    /// `willTerminate` is queued or running.
    var isTerminating = false
    /// The `didEnterBackground` calls queued or running (the app can be brought back and sent to
    /// the background again before the first has run): the app must not suspend before the last
    /// returns.
    var backgroundEntriesUnderWay = 0
    /// The app's code the system runs now outside a lifecycle callback (an observer, a memory
    /// warning, an expiration handler, an eviction handler or discard callback): the app does not
    /// suspend while any runs, and the last to return suspends it if it should be by then.
    var suspensionHolds = 0
    /// The options of the current (or last) launch.
    var launchOptions = LaunchOptions()
    /// Why the app was last terminated, until it launches again.
    var terminationReason: TerminationReason?
    /// The open background tasks.
    var backgroundTasks: [BackgroundTaskIdentifier: BackgroundTask] = [:]
    /// The next background task's identifier.
    var nextBackgroundTask = 1
    /// The lifecycle events decided and not yet delivered, and the release of a terminated app.
    var outbox = EventOutbox()
    /// A termination's release of the app's view controllers and per-launch delegate is yet to be
    /// queued on the run loop: by the outbox once the `terminated` event is delivered (the system's
    /// bookkeeping measures the app before anything is let go), or by a relaunch asked for first,
    /// ahead of its own steps.
    var releasePending = false

    /// An open background task.
    struct BackgroundTask {
        let expirationHandler: @Sendable (isolated App) -> Void
    }
}

extension LifecycleRecord {
    /// `state` and `callbackState` in one word, for reads without the lock: the state's code in the
    /// low byte, the callback state's (or 0xFF for none) in the high one.
    var publishedStates: UInt16 {
        Self.code(of: state) | (callbackState.map(Self.code(of:)) ?? 0xFF) << 8
    }

    /// The states in a word made by ``publishedStates``.
    static func states(published word: UInt16) -> (state: AppState, callbackState: AppState?) {
        (state(code: word & 0xFF) ?? .notRunning, state(code: word >> 8))
    }

    private static func code(of state: AppState) -> UInt16 {
        switch state {
        case .notRunning: 0
        case .inactive: 1
        case .active: 2
        case .background: 3
        case .suspended: 4
        }
    }

    private static func state(code: UInt16) -> AppState? {
        switch code {
        case 0: .notRunning
        case 1: .inactive
        case 2: .active
        case 3: .background
        case 4: .suspended
        default: nil
        }
    }
}

/// A hold on an app's suspension while the system runs some of its code
/// (``App/holdSuspension(orQueue:)``), good for the launch it was taken in.
struct SuspensionHold: Sendable {
    let generation: Int
}

/// Work queued on an app's run loop by a transition, run in order while the app's generation holds.
enum LifecycleStep: Sendable {
    /// Make the delegate of this launch, when the app makes one per launch and has none.
    case makeDelegate
    /// Call a delegate method.
    case callback(LifecycleCallback)
    /// Deliver a notification queued while the app was suspended.
    case deliver(AppNotification)
    /// `didEnterBackground` has returned: one entry into the background fewer under way, then
    /// suspend if nothing keeps the app running.
    case finishEnteringBackground
    /// Suspend if nothing keeps the app running (``App/suspend()`` asked while entering the
    /// background: after the `didEnterBackground` queued before it).
    case suspendIfIdle
    /// Finish a termination after `willTerminate`.
    case terminate(TerminationReason)
    /// Let go of what the last launch held, before a relaunch asked for ahead of that release.
    case releaseAfterTermination
}

/// The lifecycle transitions the system asks of an app.
package enum LifecycleTransition: String, Hashable, Sendable, CustomStringConvertible {
    /// ``App/launch(options:)``.
    case launch
    /// ``App/activate()``.
    case activate
    /// ``App/deactivate()``.
    case deactivate
    /// ``App/enterBackground()``.
    case enterBackground
    /// ``App/enterForeground()``.
    case enterForeground
    /// ``App/suspend()``.
    case suspend
    /// ``App/terminate(reason:)``.
    case terminate
    /// ``App/beginBackgroundTask(expirationHandler:)``.
    case beginBackgroundTask

    /// The transition's name, as error messages give it.
    package var description: String { rawValue }
}

/// An app's lifecycle events, decided under its lock and delivered once the lock is released: in
/// the order they were decided, by one thread at a time, so that no observer runs under the lock
/// and no two events of one app are delivered out of order or at once. A termination's release
/// (``LifecycleRecord/releasePending``) is queued behind its `terminated` event.
///
/// Whoever releases the lock with events waiting and nobody delivering them delivers them all,
/// including those other threads add meanwhile; those threads go on at once. A transition waits
/// for the events it decided before it returns (``App/eventsDelivered()``), so that its caller and
/// the system's bookkeeping see them as done.
struct EventOutbox {
    /// What the outbox delivers: an event, the release of a terminated app, or the app's code a
    /// change under the lock dropped (a terminated app's expiration handlers and observers), to be
    /// released with no lock held.
    enum Entry {
        case event(LifecycleEvent)
        case release
        case drop([any Sendable])
    }

    private var pending: Deque<Entry> = []
    private var isDelivering = false
    /// Events added so far.
    private var added = 0
    /// Events delivered so far.
    private var delivered = 0
    /// Waiters for the events added up to a count.
    private var waiters: [(through: Int, completion: Completion<Void>)] = []

    /// Adds `entry` to those waiting for delivery.
    mutating func add(_ entry: Entry) {
        pending.append(entry)
        added += 1
    }

    /// Takes on the delivery when events wait and nobody delivers them; true when the caller is
    /// now the one to deliver them (``next(afterDelivering:)`` until it returns nil).
    mutating func claimDelivery() -> Bool {
        guard !isDelivering, !pending.isEmpty else { return false }
        isDelivering = true
        return true
    }

    /// For the thread delivering: counts the entry it has just delivered, if any, and hands it the
    /// next one and the waiters now satisfied; no next entry ends its delivery.
    mutating func next(afterDelivering hasDelivered: Bool) -> (entry: Entry?, satisfied: [Completion<Void>]) {
        if hasDelivered { delivered += 1 }
        var satisfied: [Completion<Void>] = []
        if !waiters.isEmpty {
            let delivered = delivered
            satisfied = waiters.filter { $0.through <= delivered }.map(\.completion)
            waiters.removeAll { $0.through <= delivered }
            if waiters.isEmpty { waiters = [] }
        }
        guard let entry = pending.popFirst() else {
            isDelivering = false
            // Empty: its storage goes, or every app the system has hosted would keep a few hundred
            // bytes of it (a termination's events) for as long as it stays registered.
            pending = []
            return (nil, satisfied)
        }
        return (entry, satisfied)
    }

    /// A completion resolved once every entry added so far is delivered; nil when they are.
    mutating func waitForDelivery() -> Completion<Void>? {
        guard delivered < added else { return nil }
        let completion = Completion<Void>()
        waiters.append((added, completion))
        return completion
    }
}
