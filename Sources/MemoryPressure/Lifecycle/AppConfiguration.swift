/// The time limits an app runs under.
public struct AppConfiguration: Hashable, Sendable {
    /// The range every limit must fall in.
    public static let acceptedRange: ClosedRange<Duration> = .milliseconds(1) ... .seconds(3600)

    /// iOS's limits: 5 s for `didEnterBackground` and `willTerminate`, 30 s for background tasks.
    public static let `default` = AppConfiguration(
        validBackgroundDeadline: .seconds(5),
        terminationDeadline: .seconds(5),
        backgroundTaskTimeLimit: .seconds(30)
    )

    /// How long `didEnterBackground` may take before the app is terminated (reason `deadline`).
    public let backgroundDeadline: Duration
    /// How long `willTerminate` may take before the app is terminated (reason `deadline`).
    public let terminationDeadline: Duration
    /// How long a background task may stay open before its expiration handler runs; a task still
    /// open after the handler terminates the app (reason `backgroundTaskExpired`).
    public let backgroundTaskTimeLimit: Duration

    /// Validates each limit against ``acceptedRange`` (1 ms to 1 h).
    ///
    /// - Parameters:
    ///   - backgroundDeadline: How long `didEnterBackground` may take; 5 s by default.
    ///   - terminationDeadline: How long `willTerminate` may take; 5 s by default.
    ///   - backgroundTaskTimeLimit: How long a background task may stay open before its expiration
    ///     handler runs; 30 s by default.
    /// - Throws: ``MemoryPressureError`` with ``MemoryPressureError/Code/invalidConfiguration`` when
    ///   a limit is outside ``acceptedRange``.
    public init(
        backgroundDeadline: Duration = .seconds(5),
        terminationDeadline: Duration = .seconds(5),
        backgroundTaskTimeLimit: Duration = .seconds(30)
    ) throws(MemoryPressureError) {
        for (setting, value) in [
            ("backgroundDeadline", backgroundDeadline),
            ("terminationDeadline", terminationDeadline),
            ("backgroundTaskTimeLimit", backgroundTaskTimeLimit),
        ] where !Self.acceptedRange.contains(value) {
            throw .appTimeLimitOutOfRange(setting: setting, value: value)
        }
        self.init(
            validBackgroundDeadline: backgroundDeadline,
            terminationDeadline: terminationDeadline,
            backgroundTaskTimeLimit: backgroundTaskTimeLimit
        )
    }

    private init(validBackgroundDeadline: Duration, terminationDeadline: Duration, backgroundTaskTimeLimit: Duration) {
        self.backgroundDeadline = validBackgroundDeadline
        self.terminationDeadline = terminationDeadline
        self.backgroundTaskTimeLimit = backgroundTaskTimeLimit
    }
}
