import MemoryPressureRuntime
/// A change of the budget while the monitor runs, because the cgroup's limit changed: a Kubernetes
/// in-place resize, `systemctl set-property … MemoryMax=`, or a write to `memory.max` or
/// `memory.limit_in_bytes` on the process's cgroup or an ancestor.
public struct BudgetChange: Hashable, Sendable, CustomStringConvertible {
    /// The budget until now.
    public var previous: MemoryBudget
    /// The budget from now on, with the same source and thresholds.
    public var budget: MemoryBudget
    /// The cgroup's limit when it was last read (the lower of the effective `memory.max` and
    /// `memory.high`), or nil when there was none or this is the first reading.
    public var previousLimitBytes: Int?
    /// The cgroup's limit now, or nil when there is none.
    public var limitBytes: Int?
    /// Where ``limitBytes`` is set, such as `/sys/fs/cgroup/kubepods/pod1/memory.max`; nil when
    /// there is no limit.
    public var limitSource: String?
    /// When the change was seen.
    public var time: ContinuousClock.Instant

    package init(
        previous: MemoryBudget, budget: MemoryBudget, previousLimitBytes: Int?, limitBytes: Int?, limitSource: String?,
        time: ContinuousClock.Instant
    ) {
        self.previous = previous
        self.budget = budget
        self.previousLimitBytes = previousLimitBytes
        self.limitBytes = limitBytes
        self.limitSource = limitSource
        self.time = time
    }

    /// Whether a budget that does not follow the limit (given in bytes, or from physical memory)
    /// now stands below what its source gives, because the limit fell below it.
    public var isLoweredToTheLimit: Bool {
        !budget.source.followsControlGroupLimit && limitBytes != nil && budget.totalBytes < previous.totalBytes
    }

    /// The change in words: `budget 21.2 GiB -> 230.4 MiB (cgroup limit none -> 256 MiB at
    /// /sys/fs/cgroup/memory/app/memory.stat (hierarchical_memory_limit))`.
    public var description: String {
        func limit(_ bytes: Int?) -> String { bytes.map { "\(ByteCount($0))" } ?? "none" }
        let place = limitSource.map { " at \($0)" } ?? ""
        return "budget \(ByteCount(previous.totalBytes)) -> \(ByteCount(budget.totalBytes)) "
            + "(cgroup limit \(limit(previousLimitBytes)) -> \(limit(limitBytes))\(place))"
    }
}
