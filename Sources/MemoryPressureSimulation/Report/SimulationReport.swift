/// What a run showed, as the tool writes it in JSON: the footprint against the budget, what the
/// memory system did, what the apps kept, and every invariant that failed.
public struct SimulationReport: Codable, Hashable, Sendable {
    /// Level changes into each raised level (rises and falls, not repeated announcements).
    public struct LevelChanges: Codable, Hashable, Sendable {
        /// Changes into the warning level.
        public var warning: Int
        /// Changes into the critical level.
        public var critical: Int
    }

    /// What the memory warnings reached, in all.
    public struct WarningsDelivered: Codable, Hashable, Sendable {
        /// Fan-outs of a warning to the running apps.
        public var warnings: Int
        /// App delegates called, over all fan-outs.
        public var appDelegates: Int
        /// View controllers called.
        public var viewControllers: Int
        /// Warning observers called.
        public var observers: Int
    }

    /// Purges of caches and backing stores that released something.
    public struct Purges: Codable, Hashable, Sendable {
        /// How many purges released something.
        public var count: Int
        /// Declared bytes of the cache entries and stores released.
        public var bytes: Int
    }

    /// How long the ladder took to bring the footprint back under target after it crossed the
    /// warning threshold, in milliseconds; null when it never had to.
    public struct PurgeLatency: Codable, Hashable, Sendable {
        /// The latencies measured.
        public var count: Int
        /// The median.
        public var p50: Double?
        /// The 99th percentile.
        public var p99: Double?
        /// The longest.
        public var max: Double?

        private enum CodingKeys: String, CodingKey {
            case count, p50, p99, max
        }

        /// Latencies with these figures.
        public init(count: Int, p50: Double?, p99: Double?, max: Double?) {
            self.count = count
            self.p50 = p50
            self.p99 = p99
            self.max = max
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(count, forKey: .count)
            try container.encode(p50, forKey: .p50)
            try container.encode(p99, forKey: .p99)
            try container.encode(max, forKey: .max)
        }
    }

    /// One termination.
    public struct Termination: Codable, Hashable, Sendable {
        /// The app terminated.
        public var app: String
        /// The state it was terminated from.
        public var state: String
        /// Its footprint then.
        public var footprintBytes: Int
        /// Why: system pressure, per-app limit, deadline, background task expired, explicit.
        public var reason: String
        /// The ladder step that chose it, if the ladder did.
        public var step: String?
        /// Seconds from the start.
        public var atSeconds: Double
        /// The bytes its termination gave back.
        public var reclaimedBytes: Int
    }

    /// The scenario's name.
    public var scenario: String
    /// The seed of its decisions.
    public var seed: UInt64
    /// Whether the memory system reclaimed memory (false with --no-manager).
    public var manager: Bool
    /// The number of apps.
    public var apps: Int
    /// The memory budget.
    public var budgetBytes: Int
    /// The footprint the ladder works down to.
    public var targetBytes: Int
    /// Where the warning level begins.
    public var warningThresholdBytes: Int
    /// Where the critical level begins.
    public var criticalThresholdBytes: Int
    /// How long the run lasted.
    public var durationSeconds: Double
    /// The largest footprint recorded (the process's resident bytes).
    public var peakFootprintBytes: Int
    /// How long the footprint was over the budget.
    public var timeOverBudgetSeconds: Double
    /// `timeOverBudgetSeconds` as a fraction of `durationSeconds`.
    public var timeOverBudgetFraction: Double
    /// How far the peak went over the budget; 0 when it stayed within.
    public var maxOvershootBytes: Int
    /// Level changes announced by the monitor.
    public var levelChanges: LevelChanges
    /// What the memory warnings reached.
    public var warningsDelivered: WarningsDelivered
    /// Purges of caches and stores.
    public var purges: Purges
    /// How fast the ladder brought the footprint back under target.
    public var purgeLatencyMs: PurgeLatency
    /// Every termination, in order.
    public var terminations: [Termination]
    /// Launches of an app after it was terminated.
    public var relaunches: Int
    /// Relaunches that found exactly the state saved last.
    public var restoredStates: Int
    /// Relaunches that did not, though a state had been saved.
    public var lostStates: Int
    /// Every invariant that failed, one line each; empty for a good run.
    public var invariantViolations: [String]
    /// Anything a simulated app could not do (an allocation refused, a state not saved).
    public var appErrors: [String]
    /// The user's decisions carried out, and the digest of the whole plan: runs of one scenario
    /// with one seed have the same digest.
    public var decisions: Int
    /// The digest of the plan (``SimulationPlan/digest``).
    public var decisionDigest: String
    /// Footprint recordings the figures come from, and how often they were taken.
    public var samples: Int
    /// How often the footprint was recorded.
    public var recordIntervalMs: Double
    /// How often the system's monitor sampled.
    public var monitorIntervalMs: Double
    /// jemalloc's allocated bytes before any app launched, and once every app had been terminated
    /// and had let go of its memory at the end of the run: equal, give or take the run's own
    /// records, when nothing leaks. Null where jemalloc's statistics cannot be read.
    public var allocatedBytes: AllocatedBytes?

    /// jemalloc's process-wide allocated bytes at the two ends of a run.
    public struct AllocatedBytes: Codable, Hashable, Sendable {
        /// Before the first app launched.
        public var atStart: Int
        /// After every app was terminated and had let go of its memory.
        public var afterShutdown: Int
    }
}
