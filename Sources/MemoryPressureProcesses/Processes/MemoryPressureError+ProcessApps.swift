import MemoryPressureRuntime
// The errors of process apps: their options and their registration. The factories sit beside the
// code that throws them.
extension MemoryPressureError {
    /// A memory-warning signal that is not a signal, or one that would end or stop the child.
    static func warningSignalOutOfRange(_ number: Int32, accepted: ClosedRange<Int32>) -> Self {
        Self(
            .invalidArgument,
            "the memory-warning signal \(number) is not accepted; expected \(accepted.lowerBound) to \(accepted.upperBound), other than SIGKILL (9), SIGSTOP (19) and SIGCONT (18)"
        )
    }

    /// A launch grace outside the accepted range.
    static func launchGraceOutOfRange(_ grace: Duration, accepted: ClosedRange<Duration>) -> Self {
        Self(.invalidConfiguration, "the launch grace \(grace) is out of range; expected \(accepted.lowerBound) to \(accepted.upperBound)")
    }

    /// The app `identifier` is not a process app, for an operation only process apps have.
    static func notAProcessApp(_ identifier: AppIdentifier) -> Self {
        Self(.invalidArgument, "app \(identifier) is not a process app; register it with register(_:process:)")
    }
}
