import MemoryPressureRuntime
/// A PSI trigger: the kernel wakes the monitor when tasks stalled on memory for at least `stall`
/// within any `window`.
///
/// The kernel accepts windows from 500 ms to 10 s; for unprivileged processes the window must be a
/// multiple of 2 s. A trigger the kernel refuses is logged once and the monitor samples on its
/// interval alone.
public struct StallTrigger: Hashable, Sendable, CustomStringConvertible {
    /// Which stall counts.
    public enum Kind: String, Hashable, Sendable {
        /// Time in which at least one task stalled.
        case some
        /// Time in which every non-idle task stalled at once.
        case full
    }

    /// Which stall counts.
    public let kind: Kind
    /// Stall time within a window that fires the trigger.
    public let stall: Duration
    /// The window the stall is measured over.
    public let window: Duration

    /// The windows the kernel accepts.
    package static let windowRange: ClosedRange<Duration> = .milliseconds(500) ... .seconds(10)

    /// A trigger of `stall` per `window`, checked against the kernel's limits: the window within
    /// 500 ms to 10 s, the stall positive and no longer than the window.
    ///
    /// Whether the window is a multiple of 2 s, as the kernel asks of unprivileged processes, is
    /// not checked here: a trigger the kernel refuses is logged when the monitor starts, and the
    /// monitor samples on its interval alone.
    ///
    /// - Parameters:
    ///   - kind: Which stall counts; ``Kind/some`` by default.
    ///   - stall: The stall time within a window that fires the trigger.
    ///   - window: The window the stall is measured over.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidConfiguration`` when
    ///   the window or the stall is out of range.
    public init(_ kind: Kind = .some, stall: Duration, window: Duration) throws(MemoryPressureError) {
        guard Self.windowRange.contains(window), stall > .zero, stall <= window else {
            throw .stallTriggerOutOfRange(stall: stall, window: window)
        }
        self.kind = kind
        self.stall = stall
        self.window = window
    }

    private init(checkedKind kind: Kind, stall: Duration, window: Duration) {
        self.kind = kind
        self.stall = stall
        self.window = window
    }

    /// systemd's default: 200 ms of `some` stall per 2 s window.
    public static let standard = StallTrigger(checkedKind: .some, stall: .milliseconds(200), window: .seconds(2))

    /// The text written to the PSI file: `some 200000 2000000`.
    public var description: String {
        "\(kind.rawValue) \(Self.microseconds(stall)) \(Self.microseconds(window))"
    }

    private static func microseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    }
}
