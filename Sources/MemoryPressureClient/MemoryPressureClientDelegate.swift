import MemoryPressureWire

/// The code of a child process that the system calls as the child's app moves through its
/// lifecycle, as UIKit's `UIApplicationDelegate`. Every method has an empty default, so a delegate
/// implements only what it needs.
///
/// The methods are called one at a time, in the order the system sent them, on the thread of
/// ``MemoryPressureClient/start(delegate:)``; the system hears that a callback is done when the
/// method returns, and waits for that (within the callback's deadline) before it goes on. So a
/// delegate's own state, touched only from its callbacks, needs no lock: the client takes the
/// delegate over (`sending`) and no other thread calls it.
///
/// What each callback asks of the child is what it asks of an iOS app:
/// - `didFinishLaunching(options:)`: restore the state the previous instance saved, from
///   ``ClientLaunchOptions/restoredState``.
/// - `didEnterBackground`: save state (``MemoryPressureClient/saveState(_:)``) and release what can
///   be rebuilt, within the deadline; the child may be frozen once it returns.
/// - `didReceiveMemoryWarning(level:)`: release what can be rebuilt, now: caches first.
/// - `willTerminate`: save state; the child is expected to exit once it returns (the client reads
///   no more, and ``MemoryPressureClient/wait()`` returns ``MemoryPressureClient/Ending/terminated``).
import MemoryPressureWire

public protocol MemoryPressureClientDelegate: AnyObject {
    /// Launch has begun.
    func willFinishLaunching()
    /// Launch has begun, with why and what the previous instance saved: by default, calls
    /// ``willFinishLaunching()``.
    ///
    /// - Parameter options: Why the app launched, how its previous instance ended, and the state
    ///   it saved (``MemoryPressureClient/saveState(_:)``). From a system of protocol 1, a user
    ///   launch with nothing more.
    func willFinishLaunching(options: ClientLaunchOptions)
    /// Launch is done; `didBecomeActive` follows (or `didEnterBackground`, for a launch into the
    /// background).
    func didFinishLaunching()
    /// Launch is done, with the launch's options: by default, calls ``didFinishLaunching()``.
    /// Restore the saved state here, as an iOS app does in
    /// `application(_:didFinishLaunchingWithOptions:)`.
    ///
    /// - Parameter options: As in ``willFinishLaunching(options:)``.
    func didFinishLaunching(options: ClientLaunchOptions)
    /// The app is active: restart what `willResignActive` paused.
    func didBecomeActive()
    /// The app is about to become inactive (an interruption, or on its way to the background).
    func willResignActive()
    /// The app is in the background: save state and release memory, within the deadline. The
    /// process may be frozen once this returns.
    func didEnterBackground()
    /// The app is about to come back to the foreground; `didBecomeActive` follows.
    func willEnterForeground()
    /// The app is about to be terminated: save state, within the deadline. The process is
    /// expected to exit once this returns.
    func willTerminate()
    /// Memory is short: release what can be rebuilt.
    ///
    /// - Parameter level: How short: ``MemoryWarningLevel/critical`` when the system is about to
    ///   end apps to get memory back.
    func didReceiveMemoryWarning(level: MemoryWarningLevel)
}

extension MemoryPressureClientDelegate {
    /// Does nothing.
    public func willFinishLaunching() {}
    /// Calls ``willFinishLaunching()``.
    ///
    /// - Parameter options: The launch's options.
    public func willFinishLaunching(options: ClientLaunchOptions) { willFinishLaunching() }
    /// Does nothing.
    public func didFinishLaunching() {}
    /// Calls ``didFinishLaunching()``.
    ///
    /// - Parameter options: The launch's options.
    public func didFinishLaunching(options: ClientLaunchOptions) { didFinishLaunching() }
    /// Does nothing.
    public func didBecomeActive() {}
    /// Does nothing.
    public func willResignActive() {}
    /// Does nothing.
    public func didEnterBackground() {}
    /// Does nothing.
    public func willEnterForeground() {}
    /// Does nothing.
    public func willTerminate() {}
    /// Does nothing.
    ///
    /// - Parameter level: The warning's level.
    public func didReceiveMemoryWarning(level: MemoryWarningLevel) {}
}
