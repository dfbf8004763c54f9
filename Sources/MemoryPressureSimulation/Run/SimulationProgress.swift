import MemoryPressure

/// Where a running simulation stands, for a live display.
public struct SimulationProgress: Hashable, Sendable {
    /// Time since the start.
    public var elapsed: Duration
    /// The session's length.
    public var duration: Duration
    /// The footprint last recorded.
    public var footprintBytes: Int
    /// The budget.
    public var budgetBytes: Int
    /// The level the monitor announced last.
    public var level: PressureLevel
    /// The app in the foreground, if any.
    public var foreground: AppIdentifier?
    /// Memory warnings delivered (fan-outs to the running apps).
    public var warnings: Int
    /// Purges that released something.
    public var purges: Int
    /// Apps terminated.
    public var terminations: Int
    /// Apps launched again after a termination.
    public var relaunches: Int
}
