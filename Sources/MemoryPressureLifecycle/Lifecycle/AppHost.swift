/// What the system that hosts an app does at the points of the app's lifecycle that are the
/// system's own, beside the app's callbacks: the seam through which a host plugs into every app it
/// makes, so that the lifecycle knows nothing of what the host does there.
///
/// The moves, the termination and the release are told to the host as the app's events are
/// delivered, in their order, with no lock held, and before any observer of the events hears of
/// them: the host's bookkeeping is done by the time users hear of the change.
package protocol AppHost: AnyObject, Sendable {
    /// The app's `didEnterBackground` has returned, and the app has not suspended yet: it cannot
    /// until this returns. Called on the app's run loop, isolated to it, with no lock held, once per
    /// entry into the background (a launch into the background included), so that what the host
    /// runs of the app's code here (eviction handlers, discard callbacks) runs while the app still
    /// runs code, and is done before the app suspends.
    ///
    /// - Parameter app: The app; its ``App/state`` may have moved on meanwhile (a return to the
    ///   foreground queued behind this entry).
    func appEnteredBackground(_ app: App)

    /// The app moved from `previous` to `state`.
    func app(_ app: App, movedFrom previous: AppState, to state: AppState)

    /// `termination` has ended the app, from `state`, for `reason`; its run loop has not let go of
    /// anything yet.
    func appTerminated(_ app: App, _ termination: AppTermination, reason: TerminationReason, from state: AppState)

    /// The app's run loop has let go of what it held as `termination` ended it: its view
    /// controllers and, when it makes a delegate for each launch, its delegate.
    func appReleased(_ app: App, _ termination: AppTermination)
}
