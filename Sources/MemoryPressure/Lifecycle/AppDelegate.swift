/// The app's own code the system calls as the app moves through its lifecycle, as UIKit's
/// `UIApplicationDelegate`. Every method has an empty default, so a delegate implements only what
/// it needs.
///
/// Every method runs on the app's run loop, isolated to the app (the `isolated App` parameter), one
/// callback at a time: a delegate can use the app's isolated state (its view controllers, its
/// background tasks) synchronously, and needs no locks of its own. `didEnterBackground` and
/// `willTerminate` have deadlines (`AppConfiguration`); a delegate that overruns one is terminated.
public protocol AppDelegate {
    /// Launch has begun; the app is inactive.
    func willFinishLaunching(_ app: isolated App, options: LaunchOptions)
    /// Launch is done; the app becomes active next (or enters the background, for a background event).
    func didFinishLaunching(_ app: isolated App, options: LaunchOptions)
    /// The app is active: restart what `willResignActive` paused.
    func didBecomeActive(_ app: isolated App)
    /// The app is about to become inactive (an interruption, or on its way to the background).
    func willResignActive(_ app: isolated App)
    /// The app is in the background: save state and release memory, within the deadline.
    func didEnterBackground(_ app: isolated App)
    /// The app is about to come back to the foreground.
    func willEnterForeground(_ app: isolated App)
    /// The running app is about to be terminated: save state, within the deadline. Suspended apps
    /// are terminated without this call.
    func willTerminate(_ app: isolated App)
    /// Memory is short: release what can be rebuilt.
    func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning)
}

extension AppDelegate {
    public func willFinishLaunching(_ app: isolated App, options: LaunchOptions) {}
    public func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {}
    public func didBecomeActive(_ app: isolated App) {}
    public func willResignActive(_ app: isolated App) {}
    public func didEnterBackground(_ app: isolated App) {}
    public func willEnterForeground(_ app: isolated App) {}
    public func willTerminate(_ app: isolated App) {}
    public func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning) {}
}
