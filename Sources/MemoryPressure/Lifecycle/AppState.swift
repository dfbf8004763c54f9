/// Where an app is in its lifecycle, as UIKit's `UIApplication.State` plus the two states the system
/// keeps to itself.
///
/// Codable as its name, such as `"suspended"`.
public enum AppState: String, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
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

    public var description: String { rawValue }
}
