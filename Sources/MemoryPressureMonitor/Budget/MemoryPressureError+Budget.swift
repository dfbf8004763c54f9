import MemoryPressureRuntime
// The errors of budgets and their thresholds.
// The factories sit beside the code that throws them.
extension MemoryPressureError {
    /// A budget given as text that is not a size; `cause` is the size's own error.
    static func budgetUnparsable(_ cause: MemoryPressureError) -> Self {
        Self(.unparsableValue, "memory budget: \(cause)")
    }

    /// A budget of zero or fewer bytes.
    static func budgetNotPositive(bytes: Int) -> Self {
        Self(.invalidBudget, "memory budget of \(bytes) bytes is not positive; expected between 1 byte and the machine's memory")
    }

    /// A budget larger than what the machine or the cgroup can give.
    static func budgetExceedsLimit(bytes: Int, limitBytes limit: Int, limitName name: String) -> Self {
        Self(
            .invalidBudget,
            "memory budget of \(ByteCount(bytes)) (\(bytes) bytes) exceeds \(name) of \(ByteCount(limit)) "
                + "(\(limit) bytes); expected between 1 byte and \(limit) bytes",
            exceededLimit: ExceededLimit(bytes: limit, name: name)
        )
    }

    /// A ratio (of the cgroup limit or of physical memory) that is not in (0, 1].
    static func budgetRatioOutOfRange(_ ratio: Double) -> Self {
        Self(.invalidBudget, "memory budget ratio \(ratio) is out of range; expected a ratio greater than 0 and at most 1")
    }

    /// Thresholds not in the order `0 < warningRecovery < warning < critical <= 1`,
    /// `warningRecovery <= criticalRecovery < critical`.
    static func thresholdsOutOfOrder(_ ratios: MemoryBudget.Thresholds.Ratios) -> Self {
        Self(
            .invalidBudget,
            "memory budget thresholds are out of order (warning \(ratios.warning), critical \(ratios.critical), "
                + "warning recovery \(ratios.warningRecovery), critical recovery \(ratios.criticalRecovery)); expected "
                + "0 < warning recovery < warning < critical <= 1 and warning recovery <= critical recovery < critical"
        )
    }

    /// A budget to come from a cgroup that sets no memory limit.
    static var budgetWithoutControlGroupLimit: Self {
        Self(
            .noControlGroupLimit,
            "memory budget from the cgroup: no memory.max or memory.high up to the root (v2) and no "
                + "hierarchical_memory_limit (v1) sets a limit; expected a cgroup with a memory limit, or give the budget in bytes"
        )
    }

    /// An allocation that would take `app`'s heap past its hard limit.
    package static func heapOverHardLimit(app: AppIdentifier, bytes: Int, heapBytes: Int, hardLimit: Int) -> Self {
        Self(
            .allocationRefused,
            "app \(app): a heap allocation of \(bytes) bytes is refused: the heap holds \(heapBytes) bytes and "
                + "the app's hard limit is \(hardLimit) bytes; "
                + (hardLimit > heapBytes
                    ? "expected an allocation of at most \(hardLimit - heapBytes) bytes"
                    : "expected the app to free some of its heap before it allocates more"),
            app: app
        )
    }

    /// An allocation that would take the process past its budget, whose wait for room ended without
    /// it (`waitEnded` says how).
    package static func heapOverBudget(app: AppIdentifier, bytes: Int, footprintBytes: Int, budgetBytes: Int, waitEnded: String) -> Self {
        Self(
            .allocationRefused,
            "app \(app): a heap allocation of \(bytes) bytes is refused: the footprint of \(footprintBytes) bytes "
                + "would pass the budget of \(budgetBytes) bytes and \(waitEnded); expected at most "
                + "\(max(0, budgetBytes - footprintBytes)) bytes",
            app: app
        )
    }
}
