/// Where an app is in its lifecycle, as UIKit's `UIApplication.State` plus the two states the system
/// keeps to itself.
public enum AppState: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Not launched, or terminated.
    case notRunning
    /// In the foreground but not receiving events: launching, interrupted, or passing between states.
    case inactive
    /// In the foreground and receiving events.
    case active
    /// Off screen but still running code (finishing `didEnterBackground` or a background task).
    case background
    /// In memory but running no code; terminated without notice when memory runs short.
    case suspended

    /// Whether the app runs code in this state (inactive, active or background), and so receives
    /// memory warnings.
    public var isRunning: Bool {
        switch self {
        case .inactive, .active, .background: true
        case .notRunning, .suspended: false
        }
    }

    public var description: String {
        switch self {
        case .notRunning: "notRunning"
        case .inactive: "inactive"
        case .active: "active"
        case .background: "background"
        case .suspended: "suspended"
        }
    }
}
