import MemoryPressureMeasurement
/// An announcement of the pressure level: a rise, a fall, or a repeat at the same level.
public struct PressureChange: Hashable, Sendable, CustomStringConvertible {
    /// Why the level is announced.
    public enum Kind: Hashable, Sendable {
        /// The level rose; rises are announced at once.
        case rise
        /// The level fell, and stayed down for the settle time.
        case fall
        /// The level is unchanged (warning or critical) and the repeat interval has passed.
        case repeated
    }

    /// The level announced before this one.
    public var previous: PressureLevel
    /// The level now.
    public var level: PressureLevel
    /// Why it is announced.
    public var kind: Kind
    /// The sample that decided it.
    public var sample: MemorySample

    /// A change from `previous` to `level`, announced on `sample`.
    package init(previous: PressureLevel, level: PressureLevel, kind: Kind, sample: MemorySample) {
        self.previous = previous
        self.level = level
        self.kind = kind
        self.sample = sample
    }

    /// The announcement in words: `normal -> warning`, or `critical (repeated)`.
    public var description: String {
        switch kind {
        case .rise, .fall: "\(previous) -> \(level)"
        case .repeated: "\(level) (repeated)"
        }
    }
}

/// What a ``PressureMonitor`` publishes: every sample with the level it was judged at, every
/// announcement of the level, and every change of the budget. An announcement comes just before the
/// sample it was decided on; a budget change, before the first sample judged against it.
///
/// This enumeration grows as the library does (new events, reasons and steps come with new
/// capabilities): a `switch` over it needs a `default` or `@unknown default` case, so that a
/// newer version of the library does not break it. See “Types That Grow” in the MemoryPressure documentation.
public enum PressureEvent: Hashable, Sendable {
    /// A sample, and the level announced after it was judged.
    case sample(MemorySample, level: PressureLevel)
    /// A rise, fall or repeat of the level.
    case change(PressureChange)
    /// The budget changed with the cgroup's limit.
    case budgetChanged(BudgetChange)
}
