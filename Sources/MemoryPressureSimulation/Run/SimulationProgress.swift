import MemoryPressure

/// Where a running simulation stands, for a live display.
package struct SimulationProgress: Hashable, Sendable {
    /// Time since the start.
    package var elapsed: Duration
    /// The session's length.
    package var duration: Duration
    /// The footprint last recorded.
    package var footprintBytes: Int
    /// The budget.
    package var budgetBytes: Int
    /// The level the monitor announced last.
    package var level: PressureLevel
    /// The app in the foreground, if any.
    package var foreground: AppIdentifier?
    /// Memory warnings delivered (fan-outs to the running apps).
    package var warnings: Int
    /// Purges that released something.
    package var purges: Int
    /// Apps terminated.
    package var terminations: Int
    /// Apps launched again after a termination.
    package var relaunches: Int
}
