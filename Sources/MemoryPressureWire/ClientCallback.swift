/// A callback of an app, as it travels from the system to the app's child process: named as
/// `UIApplicationDelegate`'s methods and the library's `AppDelegate`'s.
///
/// The one list both ends of a client channel share: the system sends these, and the
/// `MemoryPressureClient` library reads them.
package enum ClientCallback: Hashable, Sendable {
    /// Launch has begun.
    case willFinishLaunching
    /// Launch is done.
    case didFinishLaunching
    /// The app is active.
    case didBecomeActive
    /// The app is about to become inactive.
    case willResignActive
    /// The app is in the background.
    case didEnterBackground
    /// The app is about to come back to the foreground.
    case willEnterForeground
    /// The app is about to be terminated.
    case willTerminate
    /// A memory warning, at its level.
    case didReceiveMemoryWarning(MemoryWarningLevel)
    /// Not a delegate's callback: the options of the launch under way, sent before
    /// `willFinishLaunching` (protocol 2). The client keeps them for the launch's callbacks; a
    /// client of protocol 1 answers it without calling its delegate, as any message it does not know.
    case launchOptions(ClientLaunchOptions)

    /// The callbacks that take no argument.
    static let withoutArgument: [ClientCallback] = [
        .willFinishLaunching, .didFinishLaunching, .didBecomeActive, .willResignActive,
        .didEnterBackground, .willEnterForeground, .willTerminate,
    ]

    /// The callback's name on the wire.
    package var name: String {
        switch self {
        case .willFinishLaunching: "willFinishLaunching"
        case .didFinishLaunching: "didFinishLaunching"
        case .didBecomeActive: "didBecomeActive"
        case .willResignActive: "willResignActive"
        case .didEnterBackground: "didEnterBackground"
        case .willEnterForeground: "willEnterForeground"
        case .willTerminate: "willTerminate"
        case .didReceiveMemoryWarning: "didReceiveMemoryWarning"
        case .launchOptions: "launchOptions"
        }
    }
}

/// How short memory is, in a memory warning.
///
/// This enumeration is closed: its cases are the two levels the wire format carries, and a `switch`
/// may list them both.
public enum MemoryWarningLevel: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Memory is short: caches are purged, and running apps are warned.
    case warning
    /// Memory is very short: the system is ending suspended apps, and will end more.
    case critical

    /// The level's name: `warning` or `critical`.
    public var description: String { rawValue }
}
