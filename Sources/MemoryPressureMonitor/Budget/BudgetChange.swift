#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
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
    public var time: ContinuousClock.Instant {
        get { moment.instant }
        set { moment = Moment(newValue) }
    }
    /// ``time``, in a fixed-layout form: so that a ``PressureEvent``, which may hold a change, is
    /// of fixed layout too, and the sampling thread makes one for each sample without the
    /// runtime's generic code.
    private var moment: Moment
    /// When the limit was written, as time since the Unix epoch: the modification time of the
    /// limit file the monitor's watch saw written (`memory.max` or `memory.high` on v2,
    /// `memory.limit_in_bytes` on v1, of its cgroup or an ancestor), which the kernel stamps at
    /// each write with its coarse real-time clock (a few milliseconds). Nil when the change was
    /// found otherwise (the periodic check, a kernel event: a limit set where the process cannot
    /// see it); ``time`` then says when it was seen.
    public var limitWriteTime: Duration?
    /// How long after ``limitWriteTime`` the change was seen, by the real-time clock: the delay
    /// between the limit's write and the budget's change, as best the library can tell. Nil when
    /// unknown.
    public var limitWriteDelay: Duration?

    package init(
        previous: MemoryBudget, budget: MemoryBudget, previousLimitBytes: Int?, limitBytes: Int?, limitSource: String?,
        time: ContinuousClock.Instant
    ) {
        self.previous = previous
        self.budget = budget
        self.previousLimitBytes = previousLimitBytes
        self.limitBytes = limitBytes
        self.limitSource = limitSource
        moment = Moment(time)
    }

    /// Whether a budget that does not follow the limit (given in bytes, or from physical memory)
    /// now stands below what its source gives, because the limit fell below it.
    public var isLoweredToTheLimit: Bool {
        !budget.source.followsControlGroupLimit && limitBytes != nil && budget.totalBytes < previous.totalBytes
    }

    /// When the limit was written and how long before the change was seen, in words:
    /// `limit file written 2026-11-28T03:48:12.200Z, seen 3.1 ms later`; nil when unknown.
    package var writeDescription: String? {
        guard let written = limitWriteTime, let delay = limitWriteDelay else { return nil }
        let milliseconds = Double(delay.components.seconds) * 1e3 + Double(delay.components.attoseconds) / 1e15
        return "limit file written \(Self.utcText(written)), seen \(Double(Int(milliseconds * 10)) / 10) ms later"
    }

    /// `2026-11-28T03:48:12.200Z` for a time since the Unix epoch.
    static func utcText(_ time: Duration) -> String {
        var seconds = time_t(time.components.seconds)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let milliseconds = Int(time.components.attoseconds / 1_000_000_000_000_000)
        let fraction = String(milliseconds + 1000).dropFirst()
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
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
