import MemoryPressureRuntime
// The errors of apps: their settings, limits and transitions.
// The factories sit beside the code that throws them.
extension MemoryPressureError {
    /// An app's time limit `setting` outside `AppConfiguration.acceptedRange`.
    static func appTimeLimitOutOfRange(setting: String, value: Duration) -> Self {
        let range = AppConfiguration.acceptedRange
        return Self(.invalidConfiguration, "\(setting) of \(value) is out of range; expected \(range.lowerBound) to \(range.upperBound)")
    }

    /// A per-app `limit` ("soft" or "hard") of zero or fewer bytes.
    package static func appLimitNotPositive(_ limit: String, bytes: Int) -> Self {
        Self(.invalidConfiguration, "per-app \(limit) limit of \(bytes) bytes is not positive; expected 1 byte or more")
    }

    /// A per-app soft limit that is not below the hard limit.
    package static func appSoftLimitNotBelowHard(softBytes: Int, hardBytes: Int) -> Self {
        Self(
            .invalidConfiguration,
            "per-app soft limit of \(softBytes) bytes is not below the hard limit of \(hardBytes) bytes; expected soft < hard"
        )
    }

    /// `transition` does not start from the app's state `from`.
    package static func invalidTransition(
        app: AppIdentifier,
        transition: LifecycleTransition,
        from: AppState,
        accepted: [AppState]
    ) -> Self {
        let names = accepted.map(\.description).joined(separator: ", ")
        return Self(.invalidTransition, "app \(app) cannot \(transition) from state \(from); accepted states: \(names)", app: app)
    }

    /// The app was removed from its system; nothing can follow.
    static func appUnregistered(app: AppIdentifier, transition: LifecycleTransition) -> Self {
        Self(
            .invalidTransition,
            "app \(app) cannot \(transition): it was unregistered from its memory system; expected an app registered now",
            app: app
        )
    }

    /// The app is running `willTerminate`; only the termination can follow.
    static func appTerminating(app: AppIdentifier, transition: LifecycleTransition) -> Self {
        Self(.invalidTransition, "app \(app) cannot \(transition) while it is terminating", app: app)
    }

    /// The app cannot suspend while `count` background tasks are open.
    static func backgroundTasksOpen(app: AppIdentifier, count: Int) -> Self {
        Self(.invalidTransition, "app \(app) cannot suspend with \(count) background task(s) open; end them first", app: app)
    }

    /// No open background task of `app` is `task` (one `ofAnotherApp` never is).
    static func unknownBackgroundTask(app: AppIdentifier, _ task: BackgroundTaskIdentifier, ofAnotherApp: Bool = false) -> Self {
        let reason = ofAnotherApp ? ": it was begun by another app; expected a task this app began" : ""
        return Self(.unknownBackgroundTask, "app \(app) has no open background task \(task)\(reason)", app: app)
    }

    /// Work sent to `app`, which runs no code in `state`.
    package static func appNotRunning(app: AppIdentifier, state: AppState) -> Self {
        Self(
            .appNotRunning,
            "app \(app) is \(state) and runs no code; expected it running (inactive, active or background): "
                + "bring it to the foreground or launch it first",
            app: app
        )
    }

    /// An identifier no app of the system is registered under.
    package static func unregisteredIdentifier(_ identifier: AppIdentifier) -> Self {
        Self(.invalidArgument, "no app named \(identifier) is registered; expected the identifier of a registered app", app: identifier)
    }

    /// An app with this identifier is already registered.
    package static func duplicateApp(_ app: AppIdentifier) -> Self {
        Self(.duplicateApp, "an app named \(app) is already registered; expected a unique identifier per app", app: app)
    }
}
