/// How close the footprint is to the budget, as the system announces it.
///
/// Codable as its name: `"normal"`, `"warning"` or `"critical"`.
public enum PressureLevel: Int, Comparable, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// Under the warning threshold: nothing to do.
    case normal
    /// Over the warning threshold: caches are purged and running apps are warned.
    case warning
    /// Over the critical threshold: everything is purged and suspended apps are terminated.
    case critical

    public static func < (lhs: PressureLevel, rhs: PressureLevel) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

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
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
