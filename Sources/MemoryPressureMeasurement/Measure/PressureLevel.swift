/// How close the footprint is to the budget, as the system announces it.
///
/// Codable as its name: `"normal"`, `"warning"` or `"critical"`.
///
/// This enumeration is closed: its cases are fixed by the contract it models, and a `switch`
/// may list them all. See “Types That Grow” in the MemoryPressure documentation.
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
