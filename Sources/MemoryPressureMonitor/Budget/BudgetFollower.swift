/// Keeps a budget in step with the cgroup's limit, as limits are read: the policy of live limits,
/// pure, so it can be tested on given limits (see ``MemoryBudget/following(_:)`` for the rule).
package struct BudgetFollower: Sendable {
    /// The budget as configured, which every reading is resolved from afresh.
    private let configured: MemoryBudget
    /// The budget now.
    package private(set) var budget: MemoryBudget
    /// The limits last read; nil before the first reading.
    private var limits: MemoryLimits?

    package init(configured: MemoryBudget) {
        self.configured = configured
        budget = configured
    }

    /// Takes `limits`, read at `time`, and returns the change of the budget they make, if any.
    package mutating func follow(_ limits: MemoryLimits, at time: ContinuousClock.Instant) -> BudgetChange? {
        let previousLimit = self.limits?.controlGroupLimit
        self.limits = limits
        let next = configured.following(limits)
        guard next != budget else { return nil }
        defer { budget = next }
        return BudgetChange(
            previous: budget, budget: next, previousLimitBytes: previousLimit, limitBytes: limits.controlGroupLimit,
            limitSource: limits.controlGroupLimitSource?.description, time: time
        )
    }
}
