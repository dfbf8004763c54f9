import MemoryPressureMeasurement
import MemoryPressureRuntime
/// Judges samples against a budget and decides what to announce: the policy of the monitor, pure
/// and driven by the samples' own times, so it can be tested without a clock.
///
/// - A level rises as soon as the footprint reaches its threshold (or the stall, or a kernel
///   pressure notice, calls for it), and the rise is announced at once.
/// - A level falls only when the footprint is below its lower recovery threshold (and the stall no
///   longer calls for it), and the fall is announced only once it has held for `settleTime`.
/// - While the level stays at warning or critical, the announcement is repeated every
///   `repeatInterval`.
package struct PressureLevelTracker: Sendable {
    /// The budget samples are judged against.
    package var budget: MemoryBudget
    /// Stall percentages that raise the level on their own; nil to ignore stall.
    package var stallThresholds: StallThresholds?
    /// How long a lower level must hold before the fall is announced.
    package var settleTime: Duration
    /// How long between repeated announcements at one level.
    package var repeatInterval: Duration

    /// The level last announced.
    package private(set) var level: PressureLevel = .normal
    /// When the level was last announced (a rise, fall or repeat).
    private var lastAnnouncement: Moment?
    /// Since when the samples have called for a lower level than ``level``.
    private var fallingSince: Moment?
    /// The level the last stall reading called for; samples without one (cheap samples) keep it.
    private var stallLevel: PressureLevel = .normal
    /// When the kernel last noticed pressure calling for warning and for critical (cgroup v1
    /// `memory.pressure_level`).
    private var noticedWarning: Moment?
    private var noticedCritical: Moment?

    /// How long a kernel pressure notice calls for its level: as long as the shortest PSI average
    /// (`avg10`) that the stall thresholds judge, so that both signals hold a level alike.
    package static let noticeHoldTime: Duration = .seconds(10)

    /// A tracker at `normal` that judges samples against `budget`.
    package init(
        budget: MemoryBudget,
        stallThresholds: StallThresholds? = .standard,
        settleTime: Duration = .seconds(5),
        repeatInterval: Duration = .seconds(25)
    ) {
        self.budget = budget
        self.stallThresholds = stallThresholds
        self.settleTime = settleTime
        self.repeatInterval = repeatInterval
    }

    /// Judges `sample`, taken at `sample.time`, and returns the announcement it calls for, if any.
    package mutating func update(with sample: MemorySample) -> PressureChange? {
        let now = sample.moment
        if let stallThresholds, let stall = sample.pressureStall {
            stallLevel = stallThresholds.level(for: stall)
        }
        let called = max(footprintLevel(sample.footprintBytes), stallLevel, noticedLevel(at: now))

        if called > level {
            return announce(called, kind: .rise, sample: sample)
        }
        if called < level {
            let since = fallingSince ?? now
            fallingSince = since
            return now - since >= settleTime ? announce(called, kind: .fall, sample: sample) : nil
        }
        fallingSince = nil
        if level > .normal, let lastAnnouncement, now - lastAnnouncement >= repeatInterval {
            return announce(level, kind: .repeated, sample: sample)
        }
        return nil
    }

    /// Records that the kernel noticed pressure calling for `level` at `time` (a cgroup v1
    /// `memory.pressure_level` notification): for ``noticeHoldTime`` after, samples are judged at
    /// least at that level. Ignored, as stall is, when ``stallThresholds`` is nil.
    package mutating func notice(_ level: PressureLevel, at time: Moment) {
        guard stallThresholds != nil else { return }
        switch level {
        case .normal: break
        case .warning: noticedWarning = time
        case .critical: noticedCritical = time
        }
    }

    /// The highest level a notice still calls for at `time`.
    private func noticedLevel(at time: Moment) -> PressureLevel {
        func holds(_ since: Moment?) -> Bool {
            since.map { time - $0 < Self.noticeHoldTime } ?? false
        }
        if holds(noticedCritical) { return .critical }
        if holds(noticedWarning) { return .warning }
        return .normal
    }

    /// The level the footprint calls for, given the level now: rising at a level's threshold,
    /// falling only below its recovery threshold. An unknown footprint calls for the level now.
    private func footprintLevel(_ footprint: Int?) -> PressureLevel {
        guard let footprint else { return level }
        if footprint >= budget.bytes(enteringAbove: .critical) { return .critical }
        if level == .critical, footprint >= budget.bytes(leavingBelow: .critical) { return .critical }
        if footprint >= budget.bytes(enteringAbove: .warning) { return .warning }
        if level >= .warning, footprint >= budget.bytes(leavingBelow: .warning) { return .warning }
        return .normal
    }

    private mutating func announce(_ next: PressureLevel, kind: PressureChange.Kind, sample: MemorySample) -> PressureChange {
        let change = PressureChange(previous: level, level: next, kind: kind, sample: sample)
        level = next
        lastAnnouncement = sample.moment
        fallingSince = nil
        return change
    }
}
