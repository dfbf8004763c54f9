/// How close the footprint is to the budget, as the system announces it.
///
/// Codable as its name: `"normal"`, `"warning"` or `"critical"`.
///
/// This enumeration is closed: its cases are fixed by the contract it models, and a `switch`
/// may list them all. See <doc:TypesThatGrow>.
public enum PressureLevel: Int, Comparable, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// Under the warning threshold: nothing to do.
    case normal
    /// Over the warning threshold: caches are purged and running apps are warned.
    case warning
    /// Over the critical threshold: everything is purged and suspended apps are terminated.
    case critical

    /// Orders levels by severity: normal, warning, critical.
    ///
    /// - Parameters:
    ///   - lhs: A level.
    ///   - rhs: Another level.
    /// - Returns: Whether `lhs` is less severe than `rhs`.
    public static func < (lhs: PressureLevel, rhs: PressureLevel) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The level's name: `normal`, `warning` or `critical`.
    public var description: String {
        switch self {
        case .normal: "normal"
        case .warning: "warning"
        case .critical: "critical"
        }
    }
}

extension PressureLevel {
    /// Decodes a level from its name.
    ///
    /// - Parameter decoder: The decoder, holding a single string.
    /// - Throws: `DecodingError.dataCorrupted` when the name is not `normal`, `warning` or
    ///   `critical`, or the decoder's error when the value is not a string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let level = Self.allCases.first(where: { $0.description == name }) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "unknown pressure level \"\(name)\"; expected normal, warning or critical"
            )
        }
        self = level
    }

    /// Encodes the level as its name.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's error.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

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
/// newer version of the library does not break it. See <doc:TypesThatGrow>.
public enum PressureEvent: Hashable, Sendable {
    /// A sample, and the level announced after it was judged.
    case sample(MemorySample, level: PressureLevel)
    /// A rise, fall or repeat of the level.
    case change(PressureChange)
    /// The budget changed with the cgroup's limit.
    case budgetChanged(BudgetChange)
}
