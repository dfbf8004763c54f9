import MemoryPressure

/// What a run looked like over time: the footprint recorded every few milliseconds against the
/// budget and its thresholds, the level the monitor announced, and the moments the system warned,
/// purged and terminated. The report's footprint figures are computed from it, and it is what the
/// CSV and the chart show.
package struct Timeline: Hashable, Sendable {
    /// One recording of the footprint.
    package struct Sample: Hashable, Sendable {
        /// Seconds from the start.
        package var seconds: Double
        /// The process's resident bytes.
        package var footprintBytes: Int
        /// The level the monitor had announced.
        package var level: PressureLevel
        /// The app in the foreground.
        package var foreground: String?
    }

    /// A moment the system acted.
    package struct Mark: Hashable, Sendable {
        /// What the system did.
        package enum Kind: String, Hashable, Sendable {
            case warning, purge, termination
        }

        /// Seconds from the start.
        package var seconds: Double
        /// What the system did.
        package var kind: Kind
        /// A label: the warning's level, or the terminated app.
        package var label: String
        /// The bytes it released, where it says.
        package var bytes: Int
    }

    /// The scenario's name.
    package var scenario: String
    /// The seed of its decisions.
    package var seed: UInt64
    /// Whether the memory system reclaimed memory.
    package var manager: Bool
    /// The budget, in bytes.
    package var budgetBytes: Int
    /// Where the warning level begins.
    package var warningBytes: Int
    /// Where the critical level begins.
    package var criticalBytes: Int
    /// The footprint the system reclaims down to.
    package var targetBytes: Int
    /// How long the run lasted, in seconds.
    package var durationSeconds: Double
    /// The recordings, in time order.
    package var samples: [Sample]
    /// The system's actions, in time order.
    package var marks: [Mark]

    /// The largest footprint recorded.
    package var peakFootprintBytes: Int {
        samples.map(\.footprintBytes).max() ?? 0
    }

    /// How long the footprint was over the budget: each recording over it counts until the next.
    package var timeOverBudgetSeconds: Double {
        zip(samples, samples.dropFirst()).reduce(0) { total, pair in
            pair.0.footprintBytes > budgetBytes ? total + (pair.1.seconds - pair.0.seconds) : total
        }
    }
}
