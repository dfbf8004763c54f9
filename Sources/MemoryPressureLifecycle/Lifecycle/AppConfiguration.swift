import MemoryPressureRuntime
/// The time limits an app runs under, and its importance when memory runs short.
public struct AppConfiguration: Hashable, Sendable {
    /// The range every limit must fall in.
    public static let acceptedRange: ClosedRange<Duration> = .milliseconds(1) ... .seconds(3600)

    /// iOS's limits: 5 s to launch, 5 s for `didEnterBackground` and `willTerminate`, 30 s of
    /// background time; importance ``AppImportance/service``.
    public static let `default` = AppConfiguration(
        validLaunchDeadline: .seconds(5),
        backgroundDeadline: .seconds(5),
        terminationDeadline: .seconds(5),
        backgroundTaskTimeLimit: .seconds(30),
        importance: .service
    )

    /// How long `willFinishLaunching` and `didFinishLaunching` may take together before the app is
    /// terminated (reason `launchDeadline`), as the iOS watchdog does.
    public let launchDeadline: Duration

    /// How long `didEnterBackground` may take before the app is terminated (reason `deadline`).
    public let backgroundDeadline: Duration
    /// How long `willTerminate` may take before the app is terminated (reason `deadline`).
    public let terminationDeadline: Duration
    /// The app's background time: one budget per stay in the background, counted from entering
    /// it and shared by every background task. Shortly before it runs out the open tasks'
    /// expiration handlers run; a task still open when it has run out terminates the app (reason
    /// `backgroundTaskExpired`).
    public let backgroundTaskTimeLimit: Duration

    /// The app's importance band: at the critical level the ladder terminates the apps of the least
    /// important band first (suspended, then background, largest first within each), and a child
    /// process's `oom_score_adj` follows it. ``AppImportance/service`` by default. Whatever its
    /// band, an active or inactive app is not terminated for system pressure.
    public let importance: AppImportance

    /// Whether the app is never terminated for system pressure, in any state, as a systemd unit
    /// with `OOMScoreAdjust=-1000` is never the OOM killer's choice: the ladder purges its caches
    /// and warns it, but terminates other apps only, and a process app's `oom_score_adj` is -1000
    /// where the host may set it. Its own hard memory limit still ends it. False by default.
    public let isProtected: Bool

    /// A configuration with these limits and `importance`, each limit validated against
    /// ``acceptedRange`` (1 ms to 1 h).
    ///
    /// - Parameters:
    ///   - launchDeadline: How long the launch callbacks may take together; 5 s by default.
    ///   - backgroundDeadline: How long `didEnterBackground` may take; 5 s by default.
    ///   - terminationDeadline: How long `willTerminate` may take; 5 s by default.
    ///   - backgroundTaskTimeLimit: The background time of each stay in the background; 30 s by
    ///     default.
    ///   - importance: The app's importance band when memory runs short; ``AppImportance/service``
    ///     by default.
    ///   - isProtected: Whether the app is never terminated for system pressure; false by default.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidConfiguration`` when
    ///   a limit is outside ``acceptedRange``.
    public init(
        launchDeadline: Duration = .seconds(5),
        backgroundDeadline: Duration = .seconds(5),
        terminationDeadline: Duration = .seconds(5),
        backgroundTaskTimeLimit: Duration = .seconds(30),
        importance: AppImportance = .service,
        isProtected: Bool = false
    ) throws(MemoryPressureError) {
        for (setting, value) in [
            ("launchDeadline", launchDeadline),
            ("backgroundDeadline", backgroundDeadline),
            ("terminationDeadline", terminationDeadline),
            ("backgroundTaskTimeLimit", backgroundTaskTimeLimit),
        ] where !Self.acceptedRange.contains(value) {
            throw .appTimeLimitOutOfRange(setting: setting, value: value)
        }
        self.init(
            validLaunchDeadline: launchDeadline,
            backgroundDeadline: backgroundDeadline,
            terminationDeadline: terminationDeadline,
            backgroundTaskTimeLimit: backgroundTaskTimeLimit,
            importance: importance,
            isProtected: isProtected
        )
    }

    private init(
        validLaunchDeadline: Duration, backgroundDeadline: Duration, terminationDeadline: Duration, backgroundTaskTimeLimit: Duration,
        importance: AppImportance, isProtected: Bool = false
    ) {
        self.isProtected = isProtected
        self.launchDeadline = validLaunchDeadline
        self.backgroundDeadline = backgroundDeadline
        self.terminationDeadline = terminationDeadline
        self.backgroundTaskTimeLimit = backgroundTaskTimeLimit
        self.importance = importance
    }
}

extension AppConfiguration {
    /// The `oom_score_adj` of the app's process in `state`: -1000 for a protected app, else its
    /// band's (``AppImportance``).
    package func oomScoreAdjustment(in state: AppState) -> Int {
        isProtected ? -1000 : importance.oomScoreAdjustment(in: state)
    }
}
