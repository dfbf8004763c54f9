import SystemPackage
import MemoryPressureRuntime

// The errors of the system's reclamation settings and of running it.
// The factories sit beside the code that throws them.
extension MemoryPressureError {
    /// A reclamation target ratio that is not between zero and the warning threshold's ratio.
    static func targetOutOfRange(ratio: Double, warningRatio: Double) -> Self {
        Self(
            .invalidConfiguration,
            "reclamation target ratio \(ratio) is out of range; expected more than 0 and less than the warning threshold's \(warningRatio)"
        )
    }

    /// A give-up duration of zero or less.
    static func unrecoverableDurationNotPositive(_ duration: Duration) -> Self {
        Self(
            .invalidConfiguration,
            "unrecoverable duration \(duration) is not positive; expected a duration greater than zero, such as 30s"
        )
    }

    /// A system wait (`setting`: `warningTimeout` or `admissionWait`) that is negative or longer
    /// than an hour: a negative one is no wait, and one past any sensible bound overflowed the
    /// clock arithmetic of the thread that waits (a trap).
    static func systemWaitOutOfRange(_ setting: String, _ duration: Duration) -> Self {
        let range = MemorySystem.Configuration.acceptedWaits
        return Self(
            .invalidConfiguration,
            "memory system \(setting) \(duration) is out of range; expected \(range.lowerBound) to \(range.upperBound), such as 100ms"
        )
    }

    /// `run()` called while the system runs already.
    static func alreadyRunning() -> Self {
        Self(.alreadyRunning, "memory system is already running; expected one run() at a time (cancel the running one first)")
    }

    /// The reclamation thread could not be started.
    static func reclamationThreadFailed(_ errno: Errno) -> Self {
        Self(.monitorCouldNotStart, "memory system could not start its reclamation thread: \(errno)", errno: errno)
    }
}
