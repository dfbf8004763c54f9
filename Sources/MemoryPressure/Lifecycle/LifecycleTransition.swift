/// The lifecycle transitions the system asks of an app.
package enum LifecycleTransition: String, Hashable, Sendable, CustomStringConvertible {
    /// ``App/launch(options:)``.
    case launch
    /// ``App/activate()``.
    case activate
    /// ``App/deactivate()``.
    case deactivate
    /// ``App/enterBackground()``.
    case enterBackground
    /// ``App/enterForeground()``.
    case enterForeground
    /// ``App/suspend()``.
    case suspend
    /// ``App/terminate(reason:)``.
    case terminate
    /// ``App/beginBackgroundTask(expirationHandler:)``.
    case beginBackgroundTask

    /// The transition's name, as error messages give it.
    package var description: String { rawValue }
}
