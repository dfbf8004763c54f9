/// A step of the reclamation ladder: what the system did, and what chose an app for termination.
///
/// Codable as its name, such as `"terminateSuspended"`.
public enum ReclamationStep: String, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// An app entered the background: its caches were purged per category and its backing stores
    /// released.
    case enteringBackground
    /// Caches and stores were purged and freed pages returned to the operating system.
    case purge
    /// Memory warnings were delivered to the running apps.
    case warning
    /// Suspended apps were terminated, largest first, until the footprint was under target.
    case terminateSuspended
    /// Background apps were terminated (with `willTerminate`), largest first, once no suspended app
    /// was left.
    case terminateBackground
    /// An app over its soft limit was sent a memory warning.
    case softLimit
    /// An app over its hard limit was terminated.
    case hardLimit

    public var description: String { rawValue }
}
