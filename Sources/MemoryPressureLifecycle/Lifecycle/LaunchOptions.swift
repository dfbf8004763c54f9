import MemoryPressureRuntime
/// Why an app was launched, and what it was handed to start with.
public struct LaunchOptions: Hashable, Sendable {
    /// Why the app was launched.
    ///
    /// This enumeration grows as the library does (new events, reasons and steps come with new
    /// capabilities): a `switch` over it needs a `default` or `@unknown default` case, so that a
    /// newer version of the library does not break it. See “Types That Grow” in the MemoryPressure documentation.
    public enum Reason: Hashable, Sendable {
        /// The user opened it: it launches into the foreground.
        case user
        /// An event it handles in the background (a fetch, a push, a location change), named here:
        /// it launches into the background.
        case backgroundEvent(String)
        /// A URL was opened with it: it launches into the foreground.
        case url(String)
        /// The system relaunched it to restore the state it archived before it was terminated: it
        /// launches into the foreground.
        case stateRestoration

        /// Whether the app launches into the background (`didEnterBackground`) rather than the
        /// foreground (`didBecomeActive`).
        public var launchesInBackground: Bool {
            if case .backgroundEvent = self { return true }
            return false
        }
    }

    /// Why the app was launched.
    public var reason: Reason
    /// The state the app archived before it was last terminated, when there is one.
    public var restoredState: [UInt8]?
    /// Why the archived state could not be restored, when it could not: the app launches fresh.
    public var restorationFailure: MemoryPressureError?
    /// Why the app's previous instance in this process ended, as Android's `ApplicationExitInfo`
    /// and Chromium's `wasDiscarded` tell: system pressure, its own memory limit, a deadline, an
    /// expired background task, or `explicit` when the service itself terminated it. Nil on the
    /// app's first launch.
    public var previousTermination: TerminationReason?

    /// Options for a launch for `reason`, handing back `restoredState` when there is one.
    ///
    /// - Parameters:
    ///   - reason: Why the app is launched; ``Reason/user`` by default.
    ///   - restoredState: The state to hand the app, or nil (the default) for the one it saved last
    ///     in the state archive, if any.
    public init(reason: Reason = .user, restoredState: [UInt8]? = nil) {
        self.reason = reason
        self.restoredState = restoredState
    }
}
