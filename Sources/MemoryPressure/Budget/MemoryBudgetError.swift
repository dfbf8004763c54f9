/// A budget that was rejected, naming the value and the range that is accepted.
public struct MemoryBudgetError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the budget.
    public enum Problem: Hashable, Sendable {
        /// The size text is not a number with a unit.
        case malformedSize(UnitParseError)
        /// The budget is zero or negative.
        case notPositive(bytes: Int)
        /// The budget is larger than what the machine or the cgroup can give.
        case exceedsLimit(bytes: Int, limitBytes: Int, limitName: String)
        /// A ratio (of the cgroup limit or of physical memory) is not in (0, 1].
        case ratioOutOfRange(Double)
        /// The thresholds are not in the order `0 < warningRecovery < warning < critical <= 1`,
        /// `warningRecovery <= criticalRecovery < critical`.
        case thresholdsOutOfOrder(MemoryBudget.Thresholds.Ratios)
        /// The budget was to come from the cgroup, but it has no memory.max or memory.high limit.
        case noControlGroupLimit
    }

    /// What is wrong.
    public let problem: Problem

    /// An error for `problem`.
    public init(_ problem: Problem) {
        self.problem = problem
    }

    public var description: String {
        switch problem {
        case .malformedSize(let error):
            return "memory budget: \(error)"
        case .notPositive(let bytes):
            return "memory budget of \(bytes) bytes is not positive; expected between 1 byte and the machine's memory"
        case .exceedsLimit(let bytes, let limit, let name):
            return "memory budget of \(ByteCount(bytes)) (\(bytes) bytes) exceeds \(name) of \(ByteCount(limit)) "
                + "(\(limit) bytes); expected between 1 byte and \(limit) bytes"
        case .ratioOutOfRange(let ratio):
            return "memory budget ratio \(ratio) is out of range; expected a ratio greater than 0 and at most 1"
        case .thresholdsOutOfOrder(let ratios):
            return "memory budget thresholds are out of order (warning \(ratios.warning), critical \(ratios.critical), "
                + "warning recovery \(ratios.warningRecovery), critical recovery \(ratios.criticalRecovery)); expected "
                + "0 < warning recovery < warning < critical <= 1 and warning recovery <= critical recovery < critical"
        case .noControlGroupLimit:
            return "memory budget from the cgroup: neither memory.max nor memory.high sets a limit; "
                + "expected a cgroup v2 with a memory limit, or give the budget in bytes"
        }
    }
}
