import MemoryPressure

/// A simulated user's session on a simulated device: the apps, the memory budget, how long it
/// lasts, and what the user does: events at set times and a seeded random process of app switches,
/// interruptions, launches into the background and memory spikes.
///
/// Built-in scenarios are in ``builtIn``; ``ScenarioFile`` reads them from JSON. A scenario is
/// checked by ``validated()`` before it runs; the same scenario with the same seed always makes the
/// same decisions (see ``SimulationPlan``).
package struct Scenario: Hashable, Sendable {
    /// The scenario's name.
    package var name: String
    /// One line saying what it shows.
    package var summary: String
    /// The memory budget of the simulated device, in bytes.
    package var budgetBytes: Int
    /// How long the session lasts.
    package var duration: Duration
    /// The seed of every random decision.
    package var seed: UInt64
    /// The apps installed, in order: the first is opened when the session starts.
    package var apps: [ScenarioApp]
    /// What the user does at random, or nil for scheduled events only.
    package var randomActivity: RandomActivity?
    /// What the user does at set times.
    package var events: [ScenarioEvent]

    /// A scenario with these parts; see ``validated()``.
    package init(
        name: String, summary: String, budgetBytes: Int, duration: Duration, seed: UInt64,
        apps: [ScenarioApp], randomActivity: RandomActivity?, events: [ScenarioEvent] = []
    ) {
        self.name = name
        self.summary = summary
        self.budgetBytes = budgetBytes
        self.duration = duration
        self.seed = seed
        self.apps = apps
        self.randomActivity = randomActivity
        self.events = events
    }

    /// The smallest budget the scenario can be held to: the process's own allowance plus what its
    /// largest app holds that no purge returns, with its largest spike on top, all under the
    /// reclamation target (70% of the budget). The active app is never terminated for pressure, so
    /// below this the system could not get back under target however hard it tried.
    package var minimumBudgetBytes: Int {
        let largestApp = apps.map(\.profile.unpurgeableBytes).max() ?? 0
        let largestSpike = max(
            randomActivity.map { $0.weights.spike > 0 ? $0.spikeBytes.upperBound : 0 } ?? 0,
            events.compactMap { if case .spike(let bytes, _) = $0.action { bytes } else { nil } }.max() ?? 0
        )
        let needed = Double(Self.processAllowanceBytes + largestApp + largestSpike) / Self.targetRatio
        return (Int(needed.rounded(.up)) + (1 << 20) - 1) & ~((1 << 20) - 1)
    }

    /// What the process itself (the runtime, the tool, the allocator's metadata) is allowed.
    static let processAllowanceBytes = 64 << 20
    /// The reclamation target as a fraction of the budget (the standard thresholds' warning recovery).
    static let targetRatio = MemoryBudget.Thresholds.standard.ratios.warningRecovery
}
