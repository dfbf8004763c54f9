/// What one memory warning's fan-out reached, and how long it took.
public struct WarningDelivery: Hashable, Sendable {
    /// The warning delivered.
    public var warning: MemoryWarning
    /// The apps the warning was posted to, in order: least important (background, inactive, active)
    /// first, and, among equals, largest first.
    public var order: [AppIdentifier]
    /// The apps still running when their turn came (each app's delegate is called once).
    public var appsReached: Int
    /// The delegates called.
    public var delegatesReached: Int
    /// The view controllers called.
    public var viewControllersReached: Int
    /// The observers called.
    public var observersReached: Int
    /// The apps that had not finished their part when the delivery's timeout passed.
    public var appsTimedOut: [AppIdentifier]
    /// From the first post until the last app finished.
    public var duration: Duration

    /// What one app's part of a fan-out reached.
    struct Receipt: Sendable {
        var delegates = 0
        var viewControllers = 0
        var observers = 0
    }
}
