import Logging
import MemoryPressure

/// A logger that drops everything.
public let silentLogger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

extension AppIdentifier {
    /// `name` as an identifier; for names known to be valid.
    public static func test(_ name: String) -> AppIdentifier {
        do { return try AppIdentifier(name) } catch { preconditionFailure("\(error)") }
    }
}

extension AppConfiguration {
    /// Short limits, so that an app's faults surface quickly: 100 ms to enter the background, to
    /// terminate and for a background task; never the 5 s / 30 s defaults. For tests whose subject
    /// is a deadline running out: on a loaded machine under a sanitizer a callback can take 100 ms,
    /// so a test that expects an app to reach the background or suspend uses ``patient(backgroundTime:importance:)``.
    public static let quick = try! AppConfiguration(
        backgroundDeadline: .milliseconds(100), terminationDeadline: .milliseconds(100),
        backgroundTaskTimeLimit: .milliseconds(100)
    )
}

extension AppConfiguration {
    /// Time limits no callback reaches, even on a loaded machine under a sanitizer: 60 s to
    /// launch, to enter the background and to terminate, and `backgroundTime` of background time.
    /// For tests of which callbacks run and in what order, where no deadline is meant to run out:
    /// ``quick``'s 100 ms did, for a background launch at the busy start of a ThreadSanitizer run.
    /// The app is in `importance`'s band.
    public static func patient(backgroundTime: Duration = .seconds(600), importance: AppImportance = .service) -> AppConfiguration {
        try! AppConfiguration(
            launchDeadline: .seconds(60), backgroundDeadline: .seconds(60), terminationDeadline: .seconds(60),
            backgroundTaskTimeLimit: backgroundTime, importance: importance
        )
    }

    /// 2 s of background time: its expiration handlers get their warning half a second before the
    /// end, a turn on the run loop that a loaded machine under a sanitizer still gives them
    /// (``quick``'s 25 ms is not always enough). For tests that count on the handlers running.
    ///
    /// Its callback deadlines are 2 s as well: these tests are about background time, and a
    /// `didEnterBackground` preempted for 100 ms on a loaded machine (load average 8 on two cores)
    /// was ended by ``quick``'s deadline before its task could expire.
    public static let quickWithTimeForExpirationHandlers = try! AppConfiguration(
        backgroundDeadline: .seconds(2), terminationDeadline: .seconds(2),
        backgroundTaskTimeLimit: .seconds(2)
    )
}

extension MemoryBudget.Thresholds {
    /// Thresholds that put critical close above the target, so that a test can ask for an exact
    /// number of terminations: warning at 80 %, critical at 85 %, target (warning recovery) at 75 %.
    public static let tight = try! MemoryBudget.Thresholds(
        warning: 0.80, critical: 0.85, warningRecovery: 0.75, criticalRecovery: 0.78
    )
}

extension MemorySystem.Configuration {
    /// A system judged on the process's real footprint against a budget whose target (its
    /// warning recovery) is `targetBytes`, sampled every 20 ms, with no settle time, no stall or
    /// cgroup event input and no compression, logging to `logger` when given; apps save their state
    /// in `archive` when given.
    public static func test(
        targetBytes: Int,
        thresholds: MemoryBudget.Thresholds = .tight,
        archiveIn archive: TemporaryDirectory? = nil,
        logger: Logger? = nil
    ) throws -> Self {
        let budget = try MemoryBudget(
            totalBytes: Int(Double(targetBytes) / thresholds.ratios.warningRecovery), thresholds: thresholds
        )
        var configuration = MemorySystem.Configuration(budget: budget, stateArchiveDirectory: archive?.path)
        if let logger {
            configuration.logger = logger
            configuration.monitor.logger = logger
        }
        configuration.monitor.interval = .milliseconds(20)
        configuration.monitor.settleTime = .zero
        configuration.monitor.stallThresholds = nil
        configuration.monitor.stallTrigger = nil
        configuration.monitor.controlGroupEvents = .none
        // The ladder's terminations are what most tests judge; on a machine with a zram swap device,
        // compression would come first. Tests of compression turn it on.
        configuration.compression = .off
        return configuration
    }
}
