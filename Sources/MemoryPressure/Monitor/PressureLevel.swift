/// How close the footprint is to the budget, as the system announces it.
public enum PressureLevel: Int, Comparable, Hashable, Sendable, CaseIterable, CustomStringConvertible {
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
