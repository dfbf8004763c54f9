/// Why the system terminated an app.
///
/// Its raw value, and its Codable form, is its case name, such as `"systemPressure"`; its
/// description is the name in words (`system pressure`).
public enum TerminationReason: String, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// The system needed the memory back.
    case systemPressure
    /// The app went over its own hard memory limit.
    case perAppLimit
    /// A callback with a deadline (`didEnterBackground`, `willTerminate`) overran it.
    case deadline
    /// A background task was still open after its expiration handler ran.
    case backgroundTaskExpired
    /// The system (or the user) asked for it.
    case explicit

    public var description: String {
        switch self {
        case .systemPressure: "system pressure"
        case .perAppLimit: "per-app limit"
        case .deadline: "deadline"
        case .backgroundTaskExpired: "background task expired"
        case .explicit: "explicit"
        }
    }
}
