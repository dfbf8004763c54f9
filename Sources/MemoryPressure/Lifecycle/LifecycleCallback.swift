/// The app-delegate callbacks, by name: what lifecycle events report and tests record.
public enum LifecycleCallback: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case willFinishLaunching
    case didFinishLaunching
    case didBecomeActive
    case willResignActive
    case didEnterBackground
    case willEnterForeground
    case willTerminate
    case didReceiveMemoryWarning

    /// The time the callback may take before the app is terminated (reason `deadline`), or nil when
    /// it has no deadline.
    func deadline(in configuration: AppConfiguration) -> Duration? {
        switch self {
        case .didEnterBackground: configuration.backgroundDeadline
        case .willTerminate: configuration.terminationDeadline
        default: nil
        }
    }

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
