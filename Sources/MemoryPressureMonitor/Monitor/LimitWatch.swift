import Logging
import MemoryPressureMeasurement
import MemoryPressureRuntime
import SystemPackage

/// When the sampling thread reads the cgroup's limits again, and what a reading decides: the budget
/// that follows the limit, and whether the cgroup's working set is judged. Pure of the thread: the
/// sampling loop asks when a reading is due and applies what ``check(at:logger:)`` returns.
struct LimitWatch: Sendable {
    /// What one reading decided.
    struct Outcome {
        /// The budget's change, when the limit moved it.
        var budgetChange: BudgetChange?
        /// Whether the working set is judged from now on, when that switched, and whether the
        /// process was alone in its cgroup.
        package var workingSet: (judged: Bool, alone: Bool)?
    }

    /// How often the limits (and the cgroup's processes) are read when the budget is kept fixed but
    /// the working set may be judged.
    static let defaultInterval: Duration = .seconds(10)
    /// Kernel events read the limits again at most this often: under heavy reclaim a v1 cgroup
    /// signals its pressure level hundreds of times a second.
    static let eventSpacing: Duration = .milliseconds(100)

    private let reader: MemoryLimitsReader
    private let policy: ControlGroupWorkingSetPolicy
    private let interval: Duration
    /// The budget kept in step with the cgroup's limit; nil when the configuration keeps it fixed.
    private var follower: BudgetFollower?
    /// When the limits are next read: at once, then an interval after each reading; nil when
    /// nothing needs them.
    private var nextCheck: Moment?
    /// When the limits were last read.
    private var lastCheck: Moment?
    /// Why the cgroup's limits could not be read at the last reading, if they could not (logged
    /// when it changes).
    private var lastProblem: String?
    /// Whether samples take in the cgroup's working set now; nil before the first reading.
    private var judgesWorkingSet: Bool?

    /// A watch for `configuration`'s limits whose first reading is due at `now`, the time of the
    /// monitor's clock as it starts.
    package init(configuration: PressureMonitor.Configuration, now: Moment) {
        reader = configuration.limitsReader
        policy = configuration.controlGroupWorkingSet
        interval = configuration.limitCheckInterval ?? Self.defaultInterval
        if configuration.limitCheckInterval != nil {
            follower = BudgetFollower(configured: configuration.budget)
        }
        if follower != nil || policy != .never {
            nextCheck = now
        }
    }

    /// When a reading is due: the next check, soon after the last one when a cgroup event came
    /// (`eventPending`), or at once when a limit file was written (`limitWritten`: writes are rare,
    /// and the kernel acts on the new limit as soon as the cgroup reaches it); nil when the limits
    /// are never read.
    func dueTime(eventPending: Bool, limitWritten: Bool = false) -> Moment? {
        guard let nextCheck else { return nil }
        if limitWritten { return min(nextCheck, lastCheck ?? nextCheck) }
        guard eventPending, let lastCheck else { return nextCheck }
        return min(nextCheck, lastCheck + Self.eventSpacing)
    }

    /// Reads the limits at `now` and returns what they decide, logging once a reason the budget
    /// cannot follow them. A change is stamped with the time `written` (the limit files the watch
    /// saw written since the last reading) were last written, and the delay since; with none, it
    /// carries only the time it was seen.
    package mutating func check(at now: Moment, written: Set<FilePath> = [], logger: Logger) -> Outcome {
        let reading = reader.read()
        if reading.problem != lastProblem, let problem = reading.problem, follower != nil {
            logger.notice("the budget cannot follow the cgroup's limit while this lasts: \(problem)")
        }
        (lastCheck, lastProblem) = (now, reading.problem)
        nextCheck = now + interval
        var outcome = Outcome()
        let judges = policy.takesInWorkingSet(aloneInControlGroup: reading.isAloneInControlGroup)
        if judges != (judgesWorkingSet ?? false) {
            outcome.workingSet = (judges, reading.isAloneInControlGroup)
        }
        judgesWorkingSet = judges
        outcome.budgetChange = follower?.follow(reading.limits, at: now.instant)
        if outcome.budgetChange != nil, let time = ControlGroupLimitWrites.lastWrite(of: Array(written)) {
            outcome.budgetChange?.limitWriteTime = time
            outcome.budgetChange?.limitWriteDelay = max(.zero, ControlGroupLimitWrites.realTimeNow() - time)
        }
        return outcome
    }
}
