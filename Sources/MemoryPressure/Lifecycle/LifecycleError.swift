/// A lifecycle request the app's state does not allow. Nothing changes when one is thrown.
public enum LifecycleError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The transition does not start from the app's state.
    case invalidTransition(app: AppIdentifier, transition: LifecycleTransition, from: AppState, accepted: [AppState])
    /// The app is running `willTerminate`; only the termination can follow.
    case terminating(app: AppIdentifier, transition: LifecycleTransition)
    /// The app cannot suspend while background tasks are open.
    case backgroundTasksOpen(app: AppIdentifier, count: Int)
    /// No open background task has this identifier (never begun, or already ended).
    case unknownBackgroundTask(app: AppIdentifier, BackgroundTaskIdentifier)

    public var description: String {
        switch self {
        case .invalidTransition(let app, let transition, let from, let accepted):
            let names = accepted.map(\.description).joined(separator: ", ")
            return "app \(app) cannot \(transition) from state \(from); accepted states: \(names)"
        case .terminating(let app, let transition):
            return "app \(app) cannot \(transition) while it is terminating"
        case .backgroundTasksOpen(let app, let count):
            return "app \(app) cannot suspend with \(count) background task(s) open; end them first"
        case .unknownBackgroundTask(let app, let task):
            return "app \(app) has no open background task \(task)"
        }
    }
}

/// The lifecycle transitions the system asks of an app.
public enum LifecycleTransition: String, Hashable, Sendable, CustomStringConvertible {
    case launch
    case activate
    case deactivate
    case enterBackground
    case enterForeground
    case suspend
    case terminate
    case beginBackgroundTask

    public var description: String { rawValue }
}
