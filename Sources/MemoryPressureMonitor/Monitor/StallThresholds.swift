import MemoryPressureRuntime
import MemoryPressureMeasurement
/// Pressure stall percentages that raise the level on their own, whatever the footprint.
public struct StallThresholds: Hashable, Sendable {
    /// `some avg10` (percent of the last 10 s in which a task waited for memory) at or above which
    /// the level is at least warning.
    public let someAverage10ForWarning: Double
    /// `full avg10` (percent of the last 10 s in which every task waited) at or above which the
    /// level is critical.
    public let fullAverage10ForCritical: Double

    /// The thresholds accepted: a percentage of time stalled, greater than zero and at most 100.
    package static let percentRange: ClosedRange<Double> = .leastNonzeroMagnitude ... 100

    /// Thresholds in percent of the last 10 seconds stalled, each greater than 0 and at most 100.
    ///
    /// - Parameters:
    ///   - someAverage10ForWarning: The `some avg10` percentage at or above which the level is at
    ///     least warning.
    ///   - fullAverage10ForCritical: The `full avg10` percentage at or above which the level is
    ///     critical.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidConfiguration`` when
    ///   a percentage is not greater than 0 and at most 100.
    public init(someAverage10ForWarning: Double, fullAverage10ForCritical: Double) throws(MemoryPressureError) {
        // Each threshold is named as the PSI file names its figure.
        let given = [("some avg10", someAverage10ForWarning), ("full avg10", fullAverage10ForCritical)]
        for (threshold, percent) in given {
            guard Self.percentRange.contains(percent) else { throw .stallThresholdOutOfRange(threshold, percent: percent) }
        }
        self.someAverage10ForWarning = someAverage10ForWarning
        self.fullAverage10ForCritical = fullAverage10ForCritical
    }

    private init(checkedSome some: Double, full: Double) {
        self.someAverage10ForWarning = some
        self.fullAverage10ForCritical = full
    }

    /// The default: warning at 10 % `some` stall, critical at 10 % `full` stall.
    public static let standard = StallThresholds(checkedSome: 10, full: 10)

    /// The level the stall alone calls for.
    package func level(for stall: PressureStall) -> PressureLevel {
        if stall.full.average10 >= fullAverage10ForCritical { return .critical }
        if stall.some.average10 >= someAverage10ForWarning { return .warning }
        return .normal
    }
}
