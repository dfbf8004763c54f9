import MemoryPressureRuntime
/// One thing that happened in an app's lifecycle, for checkers and recorders of invariants.
///
/// Per app, events come in the order the system decided them: `stateChanged` and `terminated` as the
/// transition is requested, before its callbacks run; `callback` and `delivered` as the callbacks and
/// observers begin on the app's run loop. They are delivered with none of the system's locks held,
/// one at a time per app, on the thread that made the change or on one delivering the app's earlier
/// events at the time; so an observer may read any property of the app and call any method of it or
/// of the system, and may hear of a callback while it already runs. A transition (``App/launch(options:)``
/// and the rest) returns once the events it decided have been delivered.
///
/// This enumeration grows as the library does (new events, reasons and steps come with new
/// capabilities): a `switch` over it needs a `default` or `@unknown default` case, so that a
/// newer version of the library does not break it. See “Types That Grow” in the MemoryPressure documentation.
public enum LifecycleEvent: Hashable, Sendable {
    /// The app moved from one state to another.
    case stateChanged(app: AppIdentifier, from: AppState, to: AppState)
    /// A delegate callback begins on the app's run loop.
    case callback(app: AppIdentifier, LifecycleCallback)
    /// A notification is about to be delivered to the app's observers on its run loop (once per
    /// delivery, whatever the number of observers); a memory warning's comes after its
    /// `callback(app:_:)` of ``LifecycleCallback/didReceiveMemoryWarning``.
    case delivered(app: AppIdentifier, AppNotification.Name)
    /// The app was terminated from `state`, for `reason`.
    case terminated(app: AppIdentifier, reason: TerminationReason, state: AppState)
    /// A terminated app has let go of its view controllers and, when it makes a delegate for each
    /// launch, of its delegate: the memory only they held is free. Emitted on the app's run loop.
    case released(app: AppIdentifier)
    /// The app is launching fresh because the state it saved could not be restored.
    case restorationFailed(app: AppIdentifier, MemoryPressureError)

    /// The app the event is about.
    public var app: AppIdentifier {
        switch self {
        case .stateChanged(let app, _, _), .callback(let app, _), .delivered(let app, _), .terminated(let app, _, _),
             .released(let app), .restorationFailed(let app, _): app
        }
    }
}

/// The app-delegate callbacks, by name: what lifecycle events report and tests record.
///
/// This enumeration is closed: its cases are fixed by the contract it models, and a `switch`
/// may list them all. See “Types That Grow” in the MemoryPressure documentation.
public enum LifecycleCallback: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// ``AppDelegate/willFinishLaunching(_:options:)``.
    case willFinishLaunching
    /// ``AppDelegate/didFinishLaunching(_:options:)``.
    case didFinishLaunching
    /// ``AppDelegate/didBecomeActive(_:)``.
    case didBecomeActive
    /// ``AppDelegate/willResignActive(_:)``.
    case willResignActive
    /// ``AppDelegate/didEnterBackground(_:)``, which has a deadline
    /// (``AppConfiguration/backgroundDeadline``).
    case didEnterBackground
    /// ``AppDelegate/willEnterForeground(_:)``.
    case willEnterForeground
    /// ``AppDelegate/willTerminate(_:)``, which has a deadline
    /// (``AppConfiguration/terminationDeadline``).
    case willTerminate
    /// ``AppDelegate/didReceiveMemoryWarning(_:warning:)``, reported once per warning an app
    /// receives, before its delegate, view controllers and observers are called.
    case didReceiveMemoryWarning

    /// What `applicationState` reads while the callback runs, as UIKit reports it; nil where it reads
    /// the state the system has moved the app to (`willTerminate`, memory warnings).
    func reportedState(launchingInBackground: Bool) -> AppState? {
        switch self {
        case .willFinishLaunching, .didFinishLaunching: launchingInBackground ? .background : .inactive
        case .didBecomeActive, .willResignActive: .active
        case .didEnterBackground, .willEnterForeground: .background
        case .willTerminate, .didReceiveMemoryWarning: nil
        }
    }

    /// The time the callback may take before the app is terminated, and the reason then; nil when
    /// it has no deadline. The launch callbacks share the launch deadline, counted from the launch.
    package func deadline(in configuration: AppConfiguration) -> (limit: Duration, reason: TerminationReason)? {
        switch self {
        case .willFinishLaunching, .didFinishLaunching: (configuration.launchDeadline, .launchDeadline)
        case .didEnterBackground: (configuration.backgroundDeadline, .deadline)
        case .willTerminate: (configuration.terminationDeadline, .deadline)
        default: nil
        }
    }

    /// The callback's name, such as `didEnterBackground`.
    public var description: String {
        switch self {
        case .willFinishLaunching: "willFinishLaunching"
        case .didFinishLaunching: "didFinishLaunching"
        case .didBecomeActive: "didBecomeActive"
        case .willResignActive: "willResignActive"
        case .didEnterBackground: "didEnterBackground"
        case .willEnterForeground: "willEnterForeground"
        case .willTerminate: "willTerminate"
        case .didReceiveMemoryWarning: "didReceiveMemoryWarning"
        }
    }
}
