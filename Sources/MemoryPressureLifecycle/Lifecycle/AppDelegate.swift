/// The app's own code the system calls as the app moves through its lifecycle, as UIKit's
/// `UIApplicationDelegate`. Every method has an empty default, so a delegate implements only what
/// it needs.
///
/// Every method runs on the app's run loop, isolated to the app (the `isolated App` parameter), one
/// callback at a time: a delegate can use the app's isolated state (its view controllers, its
/// background tasks) synchronously, and needs no locks of its own. `didEnterBackground` and
/// `willTerminate` have deadlines (``AppConfiguration``); a delegate that overruns one is terminated.
///
/// ``App/state`` read inside a callback gives what UIKit's `applicationState` reads there (the
/// system has already moved the app to where the transition ends, and decides by that; see
/// “The App Lifecycle” in the MemoryPressure documentation).
public protocol AppDelegate {
    /// Launch has begun. ``App/state`` reads `inactive` for a launch into the foreground, and
    /// `background` for a background event.
    ///
    /// - Parameters:
    ///   - app: The app, isolated: the callback runs on its run loop.
    ///   - options: Why the app was launched, and the state it saved before it was last terminated.
    func willFinishLaunching(_ app: isolated App, options: LaunchOptions)
    /// Launch is done; `didBecomeActive` follows (or `didEnterBackground`, for a background event).
    /// ``App/state`` reads as in `willFinishLaunching`. Together the two have the launch deadline
    /// (``AppConfiguration/launchDeadline``).
    ///
    /// - Parameters:
    ///   - app: The app, isolated: the callback runs on its run loop.
    ///   - options: Why the app was launched, and the state it saved before it was last terminated.
    func didFinishLaunching(_ app: isolated App, options: LaunchOptions)
    /// The app is active: restart what `willResignActive` paused. ``App/state`` reads `active`.
    ///
    /// - Parameter app: The app, isolated: the callback runs on its run loop.
    func didBecomeActive(_ app: isolated App)
    /// The app is about to become inactive (an interruption, or on its way to the background).
    /// ``App/state`` still reads `active`.
    ///
    /// - Parameter app: The app, isolated: the callback runs on its run loop.
    func willResignActive(_ app: isolated App)
    /// The app is in the background: save state and release memory, within the deadline
    /// (``AppConfiguration/backgroundDeadline``). ``App/state`` reads `background`. The app
    /// suspends when this returns, unless a background task is open.
    ///
    /// - Parameter app: The app, isolated: the callback runs on its run loop.
    func didEnterBackground(_ app: isolated App)
    /// The app is about to come back to the foreground. ``App/state`` still reads `background`; the
    /// notifications queued while the app was suspended come next, then `didBecomeActive`.
    ///
    /// - Parameter app: The app, isolated: the callback runs on its run loop.
    func willEnterForeground(_ app: isolated App)
    /// The running app is about to be terminated: save state, within the deadline
    /// (``AppConfiguration/terminationDeadline``). ``App/state`` reads the state it is terminated
    /// from. It cannot ask for more time (``App/beginBackgroundTask(expirationHandler:)`` is
    /// refused), and ending its last background task does not suspend it. Suspended apps are
    /// terminated without this call.
    ///
    /// - Parameter app: The app, isolated: the callback runs on its run loop.
    func willTerminate(_ app: isolated App)
    /// Memory is short: release what can be rebuilt. Called before the app's view controllers and
    /// observers hear the same warning.
    ///
    /// - Parameters:
    ///   - app: The app, isolated: the callback runs on its run loop.
    ///   - warning: The warning: the pressure level and the sample it was decided on.
    func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning)
}

extension AppDelegate {
    /// Does nothing.
    ///
    /// - Parameters:
    ///   - app: The app.
    ///   - options: The launch options.
    public func willFinishLaunching(_ app: isolated App, options: LaunchOptions) {}
    /// Does nothing.
    ///
    /// - Parameters:
    ///   - app: The app.
    ///   - options: The launch options.
    public func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {}
    /// Does nothing.
    ///
    /// - Parameter app: The app.
    public func didBecomeActive(_ app: isolated App) {}
    /// Does nothing.
    ///
    /// - Parameter app: The app.
    public func willResignActive(_ app: isolated App) {}
    /// Does nothing.
    ///
    /// - Parameter app: The app.
    public func didEnterBackground(_ app: isolated App) {}
    /// Does nothing.
    ///
    /// - Parameter app: The app.
    public func willEnterForeground(_ app: isolated App) {}
    /// Does nothing.
    ///
    /// - Parameter app: The app.
    public func willTerminate(_ app: isolated App) {}
    /// Does nothing.
    ///
    /// - Parameters:
    ///   - app: The app.
    ///   - warning: The warning.
    public func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning) {}
}
