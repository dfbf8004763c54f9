/// What makes the system purge caches and stores.
public enum PurgeEvent: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The owning app is entering the background.
    case enteringBackground
    /// The system is at the warning level.
    case warning
    /// The system is at the critical level.
    case critical

    /// The event a pressure level calls for: none at `normal`.
    package init?(_ level: PressureLevel) {
        switch level {
        case .normal: return nil
        case .warning: self = .warning
        case .critical: self = .critical
        }
    }

    public var description: String {
        switch self {
        case .enteringBackground: "entering background"
        case .warning: "warning"
        case .critical: "critical"
        }
    }
}
