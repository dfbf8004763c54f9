/// What a run showed, as the tool writes it in JSON: the footprint against the budget, what the
/// memory system did, what the apps kept, and every invariant that failed.
package struct SimulationReport: Codable, Hashable, Sendable {
    /// Level changes into each raised level (rises and falls, not repeated announcements).
    package struct LevelChanges: Codable, Hashable, Sendable {
        /// Changes into the warning level.
        package var warning: Int
        /// Changes into the critical level.
        package var critical: Int
    }

    /// What the memory warnings reached, in all.
    package struct WarningsDelivered: Codable, Hashable, Sendable {
        /// Fan-outs of a warning to the running apps.
        package var warnings: Int
        /// App delegates called, over all fan-outs.
        package var appDelegates: Int
        /// View controllers called.
        package var viewControllers: Int
        /// Warning observers called.
        package var observers: Int
    }

    /// Purges of caches and backing stores that released something.
    package struct Purges: Codable, Hashable, Sendable {
        /// How many purges released something.
        package var count: Int
        /// Declared bytes of the cache entries and stores released.
        package var bytes: Int
    }

    /// Times measured during the run, in milliseconds: how many, and their median, 99th percentile
    /// (by nearest rank) and longest; the three are null when none was measured.
    package struct Latencies: Codable, Hashable, Sendable {
        /// The times measured.
        package var count: Int
        /// The median.
        package var p50: Double?
        /// The 99th percentile.
        package var p99: Double?
        /// The longest.
        package var max: Double?

        private enum CodingKeys: String, CodingKey {
            case count, p50, p99, max
        }

        /// Latencies with these figures.
        package init(count: Int, p50: Double?, p99: Double?, max: Double?) {
            self.count = count
            self.p50 = p50
            self.p99 = p99
            self.max = max
        }

        /// The figures of `durations`.
        init(_ durations: [Duration]) {
            let sorted = durations.map(\.inMilliseconds).sorted()
            func percentile(_ fraction: Double) -> Double? {
                guard !sorted.isEmpty else { return nil }
                let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
                return sorted[Swift.min(Swift.max(rank, 0), sorted.count - 1)]
            }
            self.init(count: sorted.count, p50: percentile(0.5), p99: percentile(0.99), max: sorted.last)
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(count, forKey: .count)
            try container.encode(p50, forKey: .p50)
            try container.encode(p99, forKey: .p99)
            try container.encode(max, forKey: .max)
        }
    }

    /// One termination.
    package struct Termination: Codable, Hashable, Sendable {
        /// The app terminated.
        package var app: String
        /// The state it was terminated from.
        package var state: String
        /// Its footprint then.
        package var footprintBytes: Int
        /// Why: system pressure, per-app limit, deadline, background task expired, explicit.
        package var reason: String
        /// The ladder step that chose it, if the ladder did.
        package var step: String?
        /// Seconds from the start.
        package var atSeconds: Double
        /// The bytes its termination gave back.
        package var reclaimedBytes: Int
        /// How its child process ended (`TerminationRecord.processExit`), with `--processes`;
        /// left out otherwise.
        package var processExit: String?
    }

    /// One app's child process, with `--processes`, as sampled with the footprint.
    package struct ProcessPeak: Codable, Hashable, Sendable {
        /// The app.
        package var app: String
        /// The largest footprint its process had (`ProcessAppStatus.footprintBytes`), over its launches.
        package var peakFootprintBytes: Int
        /// The pids of its processes, one a launch seen running, in order.
        package var pids: [Int32]
        /// How its process is frozen when suspended (`ProcessAppStatus.freezeMechanism`); null when
        /// it was never seen running.
        package var freezeMechanism: String?
        /// Samples taken while it ran, and of them those that found it frozen.
        package var samples: Int
        package var frozenSamples: Int
    }

    /// The scenario's name.
    package var scenario: String
    /// The seed of its decisions.
    package var seed: UInt64
    /// Whether the memory system reclaimed memory (false with --no-manager).
    package var manager: Bool
    /// The number of apps.
    package var apps: Int
    /// The memory budget.
    package var budgetBytes: Int
    /// The footprint the ladder works down to.
    package var targetBytes: Int
    /// Where the warning level begins.
    package var warningThresholdBytes: Int
    /// Where the critical level begins.
    package var criticalThresholdBytes: Int
    /// How long the run lasted.
    package var durationSeconds: Double
    /// The largest footprint recorded (the process's resident bytes).
    package var peakFootprintBytes: Int
    /// How long the footprint was over the budget.
    package var timeOverBudgetSeconds: Double
    /// `timeOverBudgetSeconds` as a fraction of `durationSeconds`.
    package var timeOverBudgetFraction: Double
    /// How far the peak went over the budget; 0 when it stayed within.
    package var maxOvershootBytes: Int
    /// Level changes announced by the monitor.
    package var levelChanges: LevelChanges
    /// What the memory warnings reached.
    package var warningsDelivered: WarningsDelivered
    /// Purges of caches and stores.
    package var purges: Purges
    /// How fast the ladder brought the footprint back under target after it crossed the warning
    /// threshold (from the crossing, as `MemorySystem.purgeLatency` measures it); null figures
    /// when it never had to.
    package var purgeLatencyMs: Latencies
    /// How fast the ladder reacted to each episode of pressure: from the crossing (the heap
    /// allocation or the sample that crossed the threshold) to the start of the episode's first
    /// ladder run, in milliseconds; null figures when the ladder never ran.
    package var reactionMs: Latencies
    /// Allocations the system refused, by app: past an app's hard limit, or past the budget with no
    /// room made within the admission wait (`MemorySystem.refusedAllocations`). Apps with none are
    /// left out.
    package var refusedAllocations: [String: Int]
    /// The bytes the apps went without when their allocations were refused, as they noted them
    /// (the rest of a launch's loading counts in full).
    package var refusedBytes: Int
    /// Every termination, in order.
    package var terminations: [Termination]
    /// Launches of an app after it was terminated.
    package var relaunches: Int
    /// Relaunches that found exactly the state saved last.
    package var restoredStates: Int
    /// Relaunches that did not, though a state had been saved.
    package var lostStates: Int
    /// Every invariant that failed, one line each; empty for a good run.
    package var invariantViolations: [String]
    /// Anything a simulated app could not do (an allocation jemalloc could not make, a state not
    /// saved); allocations the system refused are counted in `refusedAllocations` instead.
    package var appErrors: [String]
    /// The user's decisions carried out, and the digest of the whole plan: runs of one scenario
    /// with one seed have the same digest.
    package var decisions: Int
    /// The digest of the plan (``SimulationPlan/digest``).
    package var decisionDigest: String
    /// Footprint recordings the figures come from, and how often they were taken.
    package var samples: Int
    /// How often the footprint was recorded.
    package var recordIntervalMs: Double
    /// How often the system's monitor sampled.
    package var monitorIntervalMs: Double
    /// jemalloc's allocated bytes before any app launched, and once every app had been terminated
    /// and had let go of its memory at the end of the run: equal, give or take the run's own
    /// records, when nothing leaks. Null where jemalloc's statistics cannot be read.
    package var allocatedBytes: AllocatedBytes?

    /// jemalloc's process-wide allocated bytes at the two ends of a run.
    package struct AllocatedBytes: Codable, Hashable, Sendable {
        /// Before the first app launched.
        package var atStart: Int
        /// After every app was terminated and had let go of its memory.
        package var afterShutdown: Int
    }

    /// With `--processes`, each app's child process: its peak footprint, pids and freezer; left out
    /// (nil) when the apps run in this process.
    package var processes: [ProcessPeak]?
    /// With `--processes`, how the children still running at the end were ended by the shutdown
    /// (`TerminationRecord.processExit`), by app; left out otherwise.
    package var shutDownExits: [ShutDownExit]?

    /// How an app's child process ended at the shutdown.
    package struct ShutDownExit: Codable, Hashable, Sendable {
        /// The app.
        package var app: String
        /// The state it was in.
        package var state: String
        /// How its process ended.
        package var processExit: String
    }
}
