#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MemoryPressureRuntime

/// How a process app hears its callbacks, lives in the background, and is frozen.
///
/// ```swift
/// var options = ProcessAppOptions()
/// options.channel = .systemd          // MEMORY_PRESSURE_WATCH, for sd-event and GLib programs
/// options.inBackground = .run         // an indexer that keeps working in the background
/// let indexer = try system.register(
///     try AppIdentifier("indexer"), process: ProcessSpecification(executable: "./indexer"), options: options
/// )
/// ```
public struct ProcessAppOptions: Hashable, Sendable {
    /// How the child hears of its app's callbacks.
    ///
    /// This enumeration grows as the library does (new events, reasons and steps come with new
    /// capabilities): a `switch` over it needs a `default` or `@unknown default` case, so that a
    /// newer version of the library does not break it. See “Types That Grow” in the MemoryPressure documentation.
    public enum Channel: Hashable, Sendable, CustomStringConvertible {
        /// None: the child still gets the freezer, the ordering and the kill.
        case none
        /// The library's client (the `MemoryPressureClient` product): every callback reaches the
        /// child through an inherited Unix socket and is answered when it has returned, within the
        /// same deadlines as an in-process app's.
        case client
        /// systemd's memory-pressure protocol: the child's `MEMORY_PRESSURE_WATCH` names a FIFO the
        /// system writes to on each memory warning, which programs built on sd-event or GLib watch
        /// with no code of ours.
        case systemd
        /// A signal on each memory warning, for programs that handle one (`SIGUSR1`, say). One of
        /// ``acceptedSignals``.
        case signal(Int32)

        /// The signals a memory warning may be sent as: 1 to 31 and the real-time signals, less
        /// `SIGKILL`, `SIGSTOP` and `SIGCONT`, which would end or stop the child instead.
        public static let acceptedSignals: ClosedRange<Int32> = 1 ... 64

        /// The channel as `supervise` files name it: `none`, `client`, `systemd` or `signal:N`.
        public var description: String {
            switch self {
            case .none: "none"
            case .client: "client"
            case .systemd: "systemd"
            case .signal(let number): "signal:\(number)"
            }
        }
    }

    /// What a process app does once its `didEnterBackground` has returned.
    public enum BackgroundMode: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// Suspended, and so frozen, once nothing keeps it running, as iOS does (the default).
        case suspend
        /// Kept running in the background, as if it held a background task without a time limit
        /// (iOS's background modes). The ladder terminates such apps after the suspended ones of
        /// their band.
        case run

        /// The mode's name: `suspend` or `run`.
        public var description: String { rawValue }
    }

    /// How the child hears of its callbacks; ``Channel/none`` by default.
    public var channel: Channel
    /// Whether the app is suspended (frozen) or keeps running in the background;
    /// ``BackgroundMode/suspend`` by default.
    public var inBackground: BackgroundMode
    /// The freezer to use, or nil (the default) for the machine's best: the cgroup v2 freezer, the v1
    /// freezer, else `SIGSTOP` to the child's process group, said once in the log. One the machine
    /// cannot offer makes the launch fail.
    public var freezeMechanism: FreezeMechanism?
    /// How long a child launched into the background runs before it may be suspended, so that it
    /// finishes launching (reads its files, fills its caches) as iOS gives a background launch
    /// time: 10 s by default, zero for none. A `client` child needs none: its launch is done when it
    /// has answered `didFinishLaunching`, before it is sent to the background. The grace holds off
    /// the suspension only; the ladder may still terminate the app, as a background one.
    public var launchGrace: Duration

    /// The ``launchGrace`` values accepted: zero to ten minutes.
    public static let acceptedLaunchGraces: ClosedRange<Duration> = .zero ... .seconds(600)

    /// Options with these settings.
    ///
    /// - Parameters:
    ///   - channel: How the child hears of its callbacks.
    ///   - inBackground: Whether the app is suspended or keeps running in the background.
    ///   - freezeMechanism: The freezer to use, or nil for the machine's best.
    ///   - launchGrace: How long a child launched into the background runs before it may be
    ///     suspended; 10 s by default.
    public init(
        channel: Channel = .none, inBackground: BackgroundMode = .suspend, freezeMechanism: FreezeMechanism? = nil,
        launchGrace: Duration = .seconds(10)
    ) {
        self.channel = channel
        self.inBackground = inBackground
        self.freezeMechanism = freezeMechanism
        self.launchGrace = launchGrace
    }

    /// Checks the channel's signal and the launch grace.
    package func validated() throws(MemoryPressureError) -> Self {
        guard Self.acceptedLaunchGraces.contains(launchGrace) else {
            throw .launchGraceOutOfRange(launchGrace, accepted: Self.acceptedLaunchGraces)
        }
        if case .signal(let number) = channel,
           !Channel.acceptedSignals.contains(number) || [SIGKILL, SIGSTOP, SIGCONT].contains(number) {
            throw .warningSignalOutOfRange(number, accepted: Channel.acceptedSignals)
        }
        return self
    }
}
