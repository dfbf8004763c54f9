/// Where an app is in its lifecycle, as UIKit's `UIApplication.State` plus the two states the system
/// keeps to itself.
///
/// Codable as its name, such as `"suspended"`.
///
/// This enumeration is closed: its cases are fixed by the contract it models, and a `switch`
/// may list them all. See “Types That Grow” in the MemoryPressure documentation.
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

    /// The state's name, such as `suspended`.
    public var description: String { rawValue }
}

/// Why the system terminated an app.
///
/// Its raw value, and its Codable form, is its case name, such as `"systemPressure"`; its
/// description is the name in words (`system pressure`).
///
/// This enumeration grows as the library does (new events, reasons and steps come with new
/// capabilities): a `switch` over it needs a `default` or `@unknown default` case, so that a
/// newer version of the library does not break it. See “Types That Grow” in the MemoryPressure documentation.
public enum TerminationReason: String, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// The system needed the memory back.
    case systemPressure
    /// The app went over its own hard memory limit.
    case perAppLimit
    /// A callback with a deadline (`didEnterBackground`, `willTerminate`) overran it.
    case deadline
    /// Launching (`willFinishLaunching` and `didFinishLaunching` together) overran the launch
    /// deadline, as the iOS watchdog ends an app that takes too long to launch.
    case launchDeadline
    /// A background task was still open when the app's background time ran out, after its
    /// expiration handler ran (or could not run, its run loop being blocked).
    case backgroundTaskExpired
    /// The system (or the user) asked for it.
    case explicit
    /// The app's process exited by itself, whatever its status (a process app; see
    /// `TerminationRecord.processExit`).
    case processExited
    /// A signal the system did not send ended the app's process: a crash (`SIGSEGV`, `SIGABRT`),
    /// the kernel's OOM killer, or another process's kill (a process app; see
    /// `TerminationRecord.processExit`).
    case processKilled

    /// The reason in words, such as `system pressure`.
    public var description: String {
        switch self {
        case .systemPressure: "system pressure"
        case .perAppLimit: "per-app limit"
        case .deadline: "deadline"
        case .launchDeadline: "launch deadline"
        case .backgroundTaskExpired: "background task expired"
        case .explicit: "explicit"
        case .processExited: "process exited"
        case .processKilled: "process killed"
        }
    }
}
