import DequeModule
import MemoryPressureRuntime

/// What an app keeps under its lock: its lifecycle, what carrying out the lifecycle's actions
/// holds, and the events waiting for delivery. The system validates and carries out transitions
/// under the lock (a typed error changes nothing), and can terminate an app whose run loop is
/// blocked.
package struct LifecycleRecord {
    /// The app's lifecycle: every decision is the machine's.
    package var machine: App.Lifecycle
    /// The timer that ends the background time of this stay, while the machine has one armed
    /// (``LifecycleStateMachine/isBackgroundExpiryArmed``).
    var backgroundExpiry: DeadlineTimers.Token?
    /// The lifecycle events decided and not yet delivered, and the release of a terminated app.
    var outbox = EventOutbox()
}

/// A hold on an app's suspension while the system runs some of its code
/// (``App/holdSuspension(orQueue:)``), good for the launch it was taken in.
package struct SuspensionHold: Sendable {
    let generation: Int
}

/// Work queued on an app's run loop by a transition, run in order while the app's generation holds.
package enum LifecycleStep: Sendable, Equatable {
    /// Make the delegate of this launch, when the app makes one per launch and has none.
    case makeDelegate
    /// Call a delegate method.
    case callback(LifecycleCallback)
    /// Deliver a notification queued while the app was suspended.
    case deliver(AppNotification)
    /// `didEnterBackground` has returned: the host reclaims what the entry lets go
    /// (``AppHost/appEnteredBackground(_:)``), then one entry into the background fewer under way,
    /// then suspend if nothing keeps the app running.
    case finishEnteringBackground
    /// Suspend if nothing keeps the app running (``App/suspend()`` asked while entering the
    /// background: after the `didEnterBackground` queued before it).
    case suspendIfIdle
    /// Finish a termination after `willTerminate`.
    case terminate(TerminationReason)
    /// Let go of what the last launch held, before a relaunch asked for ahead of that release: the
    /// end of this termination.
    case releaseAfterTermination(AppTermination)
    /// Run the open background tasks' expiration handlers: the stay's background time is nearly
    /// out.
    case runExpirationHandlers
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
    /// The app's removal from its system (`MemorySystem.unregister(_:)`).
    case unregister

    /// The transition's name, as error messages give it.
    package var description: String { rawValue }
}

/// An app's lifecycle events, decided under its lock and delivered once the lock is released: in
/// the order they were decided, by one thread at a time, so that no observer runs under the lock
/// and no two events of one app are delivered out of order or at once. A termination's release
/// (``LifecycleStateMachine/takePendingRelease()``) is queued behind its `terminated` event.
///
/// Whoever releases the lock with events waiting and nobody delivering them delivers them all,
/// including those other threads add meanwhile; those threads go on at once. A transition waits
/// for the events it decided before it returns (``App/eventsDelivered()``), so that its caller and
/// the system's bookkeeping see them as done.
struct EventOutbox {
    /// What the outbox delivers: an event, the release of a terminated app, or the app's code a
    /// change under the lock dropped (a terminated app's expiration handlers and observers), to be
    /// released with no lock held after the observers' `onRemove` (their streams' ends) are called.
    package enum Entry {
        /// An event, with the termination it tells of (a `terminated` or `released` event's) for
        /// the host.
        case event(LifecycleEvent, of: AppTermination? = nil)
        case release
        case drop([any Sendable], onRemove: [@Sendable () -> Void])
        /// A transition that queued no step is done: its completion resolves with the state then.
        case resolve(Completion<AppState>, AppState)
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
    package mutating func add(_ entry: Entry) {
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
    package mutating func next(afterDelivering hasDelivered: Bool) -> (entry: Entry?, satisfied: [Completion<Void>]) {
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
