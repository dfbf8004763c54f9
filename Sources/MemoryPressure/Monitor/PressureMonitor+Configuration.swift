import Logging

extension PressureMonitor {
    /// How a monitor samples and judges. Only the budget is required.
    public struct Configuration: Sendable {
        /// The budget samples are judged against.
        public var budget: MemoryBudget
        /// Time between samples. Default 250 ms.
        public var interval: Duration = .milliseconds(250)
        /// Longest time between jemalloc epoch refreshes (full samples). Default 1 s.
        package var allocatorRefreshInterval: Duration = .seconds(1)
        /// A change of the cheap footprint at least this large since the last full sample makes the
        /// next sample a full one. Default 16 MiB.
        package var allocatorRefreshBytes: Int = 16 << 20
        /// How long a lower level must hold before the fall is announced. Default 5 s.
        public var settleTime: Duration = .seconds(5)
        /// Time between repeated announcements at one level. Default 25 s.
        public var repeatInterval: Duration = .seconds(25)
        /// Stall percentages that raise the level on their own; nil to ignore stall.
        public var stallThresholds: StallThresholds? = .standard
        /// The PSI trigger to arm, or nil to sample on the interval alone. systemd's
        /// `$MEMORY_PRESSURE_WATCH` and `$MEMORY_PRESSURE_WRITE` take precedence when set.
        public var stallTrigger: StallTrigger? = .standard
        /// Where samples come from. Default: statm, jemalloc, the cgroup and PSI.
        public var sources: [any MemorySampleSource] = Configuration.standardSources
        /// Where the monitor logs: one line per figure it cannot read, and trigger arming.
        public var logger: Logger

        /// The process's own sources: statm, jemalloc, its cgroup and PSI.
        public static var standardSources: [any MemorySampleSource] {
            [ProcessMemorySampleSource(), JemallocSampleSource(), ControlGroupSampleSource(), PressureStallSampleSource()]
        }

        /// The defaults, judged against `budget`.
        public init(budget: MemoryBudget, logger: Logger = Logger(label: "MemoryPressure.PressureMonitor")) {
            self.budget = budget
            self.logger = logger
        }
    }
}
