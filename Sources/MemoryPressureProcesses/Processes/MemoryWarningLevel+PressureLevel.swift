import MemoryPressureMeasurement
import MemoryPressureWire

extension MemoryWarningLevel {
    /// The level a child hears for the system's `level`: `critical` for critical, `warning` for any
    /// other (a warning is never below the warning level).
    package init(_ level: PressureLevel) {
        self = level == .critical ? .critical : .warning
    }
}
