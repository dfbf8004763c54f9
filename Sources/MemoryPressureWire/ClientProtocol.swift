/// The client channel's protocol versions, and what each carries.
///
/// - Protocol 1: the lifecycle callbacks and memory warnings, each answered `done`.
/// - Protocol 2: also the launch options (``ClientLaunchOptions``) before `willFinishLaunching`,
///   and the child's saved state (`saveState`).
///
/// The system gives its version in the child's environment (``environmentName``); a child that
/// finds none speaks to a system of protocol 1. A newer system works with an older child: a message
/// the child does not know is answered without calling its delegate.
public enum ClientProtocol {
    /// The version this library speaks: 2.
    public static let version = 2
    /// The environment variable that gives the system's version: `MEMORY_PRESSURE_CLIENT_PROTOCOL`.
    public static let environmentName = "MEMORY_PRESSURE_CLIENT_PROTOCOL"
    /// The largest state a child may save: 96 KiB, which one datagram of the channel carries
    /// (in base64) within the kernel's default socket buffer.
    public static let largestSavedState = 96 << 10
}
