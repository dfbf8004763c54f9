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
    var backgroundExpiry: Task<Void, Never>?
    /// Incremented at each termination: run-loop work of an earlier generation does nothing.
    var generation = 0
    /// `willTerminate` is queued or running.
    var isTerminating = false
    /// `didEnterBackground` is queued or running: the app must not suspend before it returns.
    var isEnteringBackground = false
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

    /// An open background task.
    struct BackgroundTask {
        let expirationHandler: @Sendable (isolated App) -> Void
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
    /// Suspend when no background task is open (after `didEnterBackground`).
    case suspendIfIdle
    /// Finish a termination after `willTerminate`.
    case terminate(TerminationReason)
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
