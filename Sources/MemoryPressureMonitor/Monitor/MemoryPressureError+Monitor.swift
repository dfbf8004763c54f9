import SystemPackage
import MemoryPressureRuntime

// The errors of the pressure monitor's settings and thread.
// The factories sit beside the code that throws them.
extension MemoryPressureError {
    /// A stall threshold, named as the PSI file names its figure (`some avg10`), that is not a
    /// percentage of time the kernel can report.
    static func stallThresholdOutOfRange(_ threshold: String, percent: Double) -> Self {
        Self(
            .invalidConfiguration,
            "stall threshold \(threshold) \(percent)% is out of range; expected a percentage greater than 0 and at most 100"
        )
    }

    /// A PSI trigger outside the kernel's limits.
    static func stallTriggerOutOfRange(stall: Duration, window: Duration) -> Self {
        Self(
            .invalidConfiguration,
            "stall trigger of \(stall) per \(window) window is out of range; expected a window from 500 ms to 10 s "
                + "(a multiple of 2 s for unprivileged processes) and a stall greater than zero and at most the window"
        )
    }

    /// A sampling interval of zero or less.
    static func monitorIntervalNotPositive(_ interval: Duration) -> Self {
        Self(
            .invalidConfiguration,
            "pressure monitor interval \(interval) is not positive; expected an interval greater than zero, such as 250ms"
        )
    }

    /// A limit-check interval of zero or less (it would read the cgroup's limit on every wake-up,
    /// keeping a core busy).
    static func limitCheckIntervalNotPositive(_ interval: Duration) -> Self {
        Self(
            .invalidConfiguration,
            "pressure monitor limitCheckInterval \(interval) is not positive; expected an interval greater than zero, such as 10s, "
                + "or nil to keep the configured budget"
        )
    }

    /// A negative settle time or repeat interval (`setting`).
    /// A fast-sampling growth rate of zero or less, which would sample at the fast interval always.
    static func fastSamplingGrowthRateNotPositive(_ rate: Int) -> Self {
        Self(
            .invalidConfiguration,
            "pressure monitor fastSamplingGrowthRate \(rate) bytes per second is not positive; expected 1 or more "
                + "(Int.max samples fast only above the warning threshold)"
        )
    }

    static func monitorDurationNegative(_ setting: String, _ duration: Duration) -> Self {
        Self(.invalidConfiguration, "pressure monitor \(setting) \(duration) is negative; expected zero or more, such as 5s")
    }

    /// The monitor's wake-up pipe or thread could not be made.
    package static func monitorCouldNotStart(_ errno: Errno) -> Self {
        Self(.monitorCouldNotStart, "pressure monitor could not start its sampling thread: \(errno)", errno: errno)
    }
}
