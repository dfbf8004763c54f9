import MemoryPressure

/// What a run looked like over time: the footprint recorded every few milliseconds against the
/// budget and its thresholds, the level the monitor announced, and the moments the system warned,
/// purged and terminated. The report's footprint figures are computed from it, and it is what the
/// CSV and the chart show.
public struct Timeline: Hashable, Sendable {
    /// One recording of the footprint.
    public struct Sample: Hashable, Sendable {
        /// Seconds from the start.
        public var seconds: Double
        /// The process's resident bytes.
        public var footprintBytes: Int
        /// The level the monitor had announced.
        public var level: PressureLevel
        /// The app in the foreground.
        public var foreground: String?
    }

    /// A moment the system acted.
    public struct Mark: Hashable, Sendable {
        /// What the system did.
        public enum Kind: String, Hashable, Sendable {
            case warning, purge, termination
        }

        /// Seconds from the start.
        public var seconds: Double
        /// What the system did.
        public var kind: Kind
        /// A label: the warning's level, or the terminated app.
        public var label: String
        /// The bytes it released, where it says.
        public var bytes: Int
    }

    /// The scenario's name.
    public var scenario: String
    /// The seed of its decisions.
    public var seed: UInt64
    /// Whether the memory system reclaimed memory.
    public var manager: Bool
    /// The budget, in bytes.
    public var budgetBytes: Int
    /// Where the warning level begins.
    public var warningBytes: Int
    /// Where the critical level begins.
    public var criticalBytes: Int
    /// The footprint the system reclaims down to.
    public var targetBytes: Int
    /// How long the run lasted, in seconds.
    public var durationSeconds: Double
    /// The recordings, in time order.
    public var samples: [Sample]
    /// The system's actions, in time order.
    public var marks: [Mark]

    /// The largest footprint recorded.
    public var peakFootprintBytes: Int {
        samples.map(\.footprintBytes).max() ?? 0
    }

    /// How long the footprint was over the budget: each recording over it counts until the next.
    public var timeOverBudgetSeconds: Double {
        zip(samples, samples.dropFirst()).reduce(0) { total, pair in
            pair.0.footprintBytes > budgetBytes ? total + (pair.1.seconds - pair.0.seconds) : total
        }
    }
}
