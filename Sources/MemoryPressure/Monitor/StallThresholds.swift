/// Pressure stall percentages that raise the level on their own, whatever the footprint.
public struct StallThresholds: Hashable, Sendable {
    /// `some avg10` (percent of the last 10 s in which a task waited for memory) at or above which
    /// the level is at least warning.
    public var someAverage10ForWarning: Double
    /// `full avg10` (percent of the last 10 s in which every task waited) at or above which the
    /// level is critical.
    public var fullAverage10ForCritical: Double

    /// Thresholds in percent of the last 10 seconds stalled.
    public init(someAverage10ForWarning: Double = 10, fullAverage10ForCritical: Double = 10) {
        self.someAverage10ForWarning = someAverage10ForWarning
        self.fullAverage10ForCritical = fullAverage10ForCritical
    }

    /// The level the stall alone calls for.
    func level(for stall: PressureStall) -> PressureLevel {
        if stall.full.average10 >= fullAverage10ForCritical { return .critical }
        if stall.some.average10 >= someAverage10ForWarning { return .warning }
        return .normal
    }
}
