import Jemalloc
import SystemPackage

/// An error from the memory-pressure library: what kind of problem it is (``code``) and a message
/// that names the problem and the accepted range (``description``).
///
/// Compare ``code`` with the codes you handle; the list of codes is open, so a switch needs a
/// `default`, and a code added later does not break it. The message is for people: it names the
/// value given and what is accepted.
///
/// ```swift
/// do {
///     _ = try system.register(identifier) { MyDelegate() }
/// } catch where error.code == .duplicateApp {
///     logger.notice("\(error)")
/// }
/// ```
public struct MemoryPressureError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem. Opaque and extensible: new codes can be added without breaking a switch.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable, CaseIterable {
            case invalidBudget
            case noControlGroupLimit
            case invalidConfiguration
            case invalidArgument
            case unparsableValue
            case invalidIdentifier
            case invalidTransition
            case unknownBackgroundTask
            case duplicateApp
            case heapClosed
            case allocationFailed
            case allocationRefused
            case stateArchiveUnusable
            case stateNotSaved
            case stateNotRestored
            case measurementUnavailable
            case measurementFailed
            case monitorCouldNotStart
            case alreadyRunning
            case appNotRunning
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The code's name, as it is spelled here: `invalidBudget`, `duplicateApp`, ….
        public var description: String { base.rawValue }

        /// Every code there is, for tests.
        static var all: [Code] { Base.allCases.map(Code.init) }

        // MARK: Settings and values

        /// A memory budget that is not positive, exceeds the machine's or the cgroup's memory, was
        /// to be a ratio outside (0, 1], or has thresholds out of order.
        public static let invalidBudget = Code(.invalidBudget)
        /// The budget was to come from the cgroup, but neither `memory.max` nor `memory.high` sets a
        /// limit.
        public static let noControlGroupLimit = Code(.noControlGroupLimit)
        /// A setting outside its range: stall thresholds or triggers, the monitor's interval, an
        /// app's time limits or memory limits, the reclamation target, or a cache's limits.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// A value passed to a call outside the range it accepts: a negative cache cost, a fraction
        /// outside 0 through 1, a backing store's dimensions.
        public static let invalidArgument = Code(.invalidArgument)
        /// Text that is not a size or a duration of the accepted form (also a budget given as such
        /// text).
        public static let unparsableValue = Code(.unparsableValue)
        /// An app identifier that is not a safe single path component.
        public static let invalidIdentifier = Code(.invalidIdentifier)

        // MARK: Lifecycle

        /// A lifecycle transition the app cannot make now: it does not start from the app's state,
        /// the app is running `willTerminate`, or (to suspend) background tasks are open. Nothing
        /// changed.
        public static let invalidTransition = Code(.invalidTransition)
        /// A background task to end that is not open (never begun, or already ended).
        public static let unknownBackgroundTask = Code(.unknownBackgroundTask)
        /// An app registered under an identifier that is already registered.
        public static let duplicateApp = Code(.duplicateApp)

        // MARK: Heaps

        /// An allocation in a heap that was closed (its app was removed).
        public static let heapClosed = Code(.heapClosed)
        /// jemalloc refused an allocation: out of memory, or a byte count that is not positive.
        public static let allocationFailed = Code(.allocationFailed)
        /// An app-heap allocation refused before it was made: it would have taken the app past its
        /// hard limit, or the process past its budget with no room made within the admission wait.
        /// The heap's bytes are unchanged.
        public static let allocationRefused = Code(.allocationRefused)

        // MARK: State archive

        /// The state archive cannot be used: its directory is not a usable directory, others can
        /// write it (and it is not sticky and ours), the app's directory is a symbolic link or not
        /// ours alone, or the app was made without an archive. Saves and loads both report it.
        public static let stateArchiveUnusable = Code(.stateArchiveUnusable)
        /// A state could not be saved: it could not be encoded, it is larger than the archive's limit
        /// (64 MiB with its header), or the write failed (the directory is read-only, the disk is
        /// full, a file is planted at the temporary name, …). The state saved before is kept.
        public static let stateNotSaved = Code(.stateNotSaved)
        /// A saved state could not be restored: it could not be read, it is refused (a symbolic link,
        /// not a regular file, or larger than the archive's limit), it is damaged (its header,
        /// length or checksum does not match), or it does not decode as the type asked for. The app
        /// launches fresh.
        public static let stateNotRestored = Code(.stateNotRestored)

        // MARK: Measurement

        /// A kernel file that does not exist: this kernel or container does not offer the figure, and
        /// never will in this process.
        public static let measurementUnavailable = Code(.measurementUnavailable)
        /// A kernel file that exists but could not be read (``MemoryPressureError/errno`` says why),
        /// or whose contents are not in the format the kernel documents.
        public static let measurementFailed = Code(.measurementFailed)

        // MARK: Monitor

        /// The pressure monitor could not make its wake-up pipe or its sampling thread;
        /// ``MemoryPressureError/errno`` says why.
        public static let monitorCouldNotStart = Code(.monitorCouldNotStart)
        /// ``MemorySystem/run()`` was called while the system was already running.
        public static let alreadyRunning = Code(.alreadyRunning)
        /// Work was sent to an app (``App/perform(_:)``) that is suspended or not running: it runs
        /// no code until it is back in the foreground or launched.
        public static let appNotRunning = Code(.appNotRunning)
    }

    /// A limit that a value went over.
    package struct ExceededLimit: Hashable, Sendable {
        /// The limit, in bytes.
        package let bytes: Int
        /// The limit's name as the message gives it: `the cgroup's memory.max` or `the machine's
        /// physical memory`.
        package let name: String
    }

    /// The kind of problem.
    public let code: Code
    /// The message: names the problem, the value given and what is accepted.
    public let description: String
    /// The app involved, when the error is about one app and it is known.
    public let app: AppIdentifier?
    /// The errno of the failed system call, for ``Code/monitorCouldNotStart``,
    /// ``Code/measurementFailed``, ``Code/stateNotSaved``, ``Code/stateNotRestored``, and
    /// ``Code/allocationFailed`` when jemalloc returned one; nil otherwise.
    public let errno: Errno?
    /// For a budget over the machine's or the cgroup's memory (``Code/invalidBudget``), the limit it
    /// went over; nil otherwise.
    package let exceededLimit: ExceededLimit?

    /// An error of `code` with the message `description`.
    init(
        _ code: Code,
        _ description: String,
        app: AppIdentifier? = nil,
        errno: Errno? = nil,
        exceededLimit: ExceededLimit? = nil
    ) {
        self.code = code
        self.description = description
        self.app = app
        self.errno = errno
        self.exceededLimit = exceededLimit
    }

    /// Errors are equal when their codes are: the code is what a program handles, the message is
    /// for people and names the values given.
    ///
    /// - Parameters:
    ///   - lhs: An error.
    ///   - rhs: Another error.
    /// - Returns: Whether the two have the same code.
    public static func == (lhs: MemoryPressureError, rhs: MemoryPressureError) -> Bool {
        lhs.code == rhs.code
    }

    /// Hashes the code, which is what equality compares.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }
}

// MARK: - Budgets

extension MemoryPressureError {
    /// A budget given as text that is not a size; `cause` is the size's own error.
    static func budgetUnparsable(_ cause: MemoryPressureError) -> Self {
        Self(.unparsableValue, "memory budget: \(cause)")
    }

    /// A budget of zero or fewer bytes.
    static func budgetNotPositive(bytes: Int) -> Self {
        Self(.invalidBudget, "memory budget of \(bytes) bytes is not positive; expected between 1 byte and the machine's memory")
    }

    /// A budget larger than what the machine or the cgroup can give.
    static func budgetExceedsLimit(bytes: Int, limitBytes limit: Int, limitName name: String) -> Self {
        Self(
            .invalidBudget,
            "memory budget of \(ByteCount(bytes)) (\(bytes) bytes) exceeds \(name) of \(ByteCount(limit)) "
                + "(\(limit) bytes); expected between 1 byte and \(limit) bytes",
            exceededLimit: ExceededLimit(bytes: limit, name: name)
        )
    }

    /// A ratio (of the cgroup limit or of physical memory) that is not in (0, 1].
    static func budgetRatioOutOfRange(_ ratio: Double) -> Self {
        Self(.invalidBudget, "memory budget ratio \(ratio) is out of range; expected a ratio greater than 0 and at most 1")
    }

    /// Thresholds not in the order `0 < warningRecovery < warning < critical <= 1`,
    /// `warningRecovery <= criticalRecovery < critical`.
    static func thresholdsOutOfOrder(_ ratios: MemoryBudget.Thresholds.Ratios) -> Self {
        Self(
            .invalidBudget,
            "memory budget thresholds are out of order (warning \(ratios.warning), critical \(ratios.critical), "
                + "warning recovery \(ratios.warningRecovery), critical recovery \(ratios.criticalRecovery)); expected "
                + "0 < warning recovery < warning < critical <= 1 and warning recovery <= critical recovery < critical"
        )
    }

    /// A budget to come from a cgroup that sets no memory limit.
    static var budgetWithoutControlGroupLimit: Self {
        Self(
            .noControlGroupLimit,
            "memory budget from the cgroup: no memory.max or memory.high up to the root (v2) and no "
                + "hierarchical_memory_limit (v1) sets a limit; expected a cgroup with a memory limit, or give the budget in bytes"
        )
    }
}

// MARK: - Units and identifiers

extension MemoryPressureError {
    /// `text`, meant to be a `quantity` (`size` or `duration`) of the `expected` form, is not:
    /// `problem` says why. The text is echoed escaped and cut (``StringProtocol/echoed(limit:)``).
    static func unparsable(quantity: String, text: String, problem: String = "is not valid", expected: String) -> Self {
        Self(.unparsableValue, "\(quantity) \(text.echoed()) \(problem); expected \(expected)")
    }

    /// An app identifier that was rejected; `reason` says what is wrong: `is empty`, `contains a
    /// path separator`, ….
    static func invalidIdentifier(_ identifier: String, reason: String) -> Self {
        let shown = identifier.unicodeScalars.count > 40
            ? String(String.UnicodeScalarView(identifier.unicodeScalars.prefix(40))).debugDescription + "…"
            : identifier.debugDescription
        return Self(
            .invalidIdentifier,
            "app identifier \(shown) \(reason); expected 1 to \(AppIdentifier.maximumByteCount) UTF-8 bytes, "
                + "without '/', '\\\\' or control characters, and not '.' or '..'"
        )
    }

    /// The reserved identifier of a service's own caches, given where an app's is expected.
    static func reservedIdentifier(_ identifier: String) -> Self {
        Self(
            .invalidIdentifier,
            "app identifier \(identifier.debugDescription) is reserved for a service's own caches (AppIdentifier.service); "
                + "expected any other name"
        )
    }
}

// MARK: - Settings

extension MemoryPressureError {
    /// A stall threshold, named as the PSI file names its figure (`some avg10`), that is not a
    /// percentage of time the kernel can report.
    static func stallThresholdOutOfRange(_ threshold: String, percent: Double) -> Self {
        Self(
            .invalidConfiguration,
            "stall threshold \(threshold) \(percent)% is out of range; expected a percentage greater than 0 and at most 100"
        )
    }

    /// A PSI trigger outside the kernel's limits.
    static func stallTriggerOutOfRange(stall: Duration, window: Duration) -> Self {
        Self(
            .invalidConfiguration,
            "stall trigger of \(stall) per \(window) window is out of range; expected a window from 500 ms to 10 s "
                + "(a multiple of 2 s for unprivileged processes) and a stall greater than zero and at most the window"
        )
    }

    /// A sampling interval of zero or less.
    static func unrecoverableDurationNotPositive(_ duration: Duration) -> Self {
        Self(
            .invalidConfiguration,
            "unrecoverable duration \(duration) is not positive; expected a duration greater than zero, such as 30s"
        )
    }

    static func monitorIntervalNotPositive(_ interval: Duration) -> Self {
        Self(
            .invalidConfiguration,
            "pressure monitor interval \(interval) is not positive; expected an interval greater than zero, such as 250ms"
        )
    }

    /// An app's time limit `setting` outside `AppConfiguration.acceptedRange`.
    static func appTimeLimitOutOfRange(setting: String, value: Duration) -> Self {
        let range = AppConfiguration.acceptedRange
        return Self(.invalidConfiguration, "\(setting) of \(value) is out of range; expected \(range.lowerBound) to \(range.upperBound)")
    }

    /// A per-app `limit` ("soft" or "hard") of zero or fewer bytes.
    static func appLimitNotPositive(_ limit: String, bytes: Int) -> Self {
        Self(.invalidConfiguration, "per-app \(limit) limit of \(bytes) bytes is not positive; expected 1 byte or more")
    }

    /// A per-app soft limit that is not below the hard limit.
    static func appSoftLimitNotBelowHard(softBytes: Int, hardBytes: Int) -> Self {
        Self(
            .invalidConfiguration,
            "per-app soft limit of \(softBytes) bytes is not below the hard limit of \(hardBytes) bytes; expected soft < hard"
        )
    }

    /// A reclamation target ratio that is not between zero and the warning threshold's ratio.
    static func targetOutOfRange(ratio: Double, warningRatio: Double) -> Self {
        Self(
            .invalidConfiguration,
            "reclamation target ratio \(ratio) is out of range; expected more than 0 and less than the warning threshold's \(warningRatio)"
        )
    }

    /// A cache's `name` limit (cost or count) of zero or less; limits are at least 1 (leave one
    /// out for no limit).
    static func cacheLimitNotPositive(_ name: String, value: Int) -> Self {
        Self(.invalidConfiguration, "cache \(name) limit \(value) is not positive; expected 1 or more, or no limit")
    }

    /// A cost limit as a fraction of the budget outside (0, 1].
    static func cacheBudgetFractionOutOfRange(_ fraction: Double) -> Self {
        Self(.invalidConfiguration, "cache cost limit of \(fraction) of the budget is out of range; expected a fraction above 0 and at most 1, or no limit")
    }

    /// A count limit larger than a cache can hold.
    static func cacheCountLimitTooLarge(_ limit: Int, maximum: Int) -> Self {
        Self(
            .invalidConfiguration,
            "cache count limit \(limit) is larger than a cache holds; expected 1 through \(maximum), or no limit"
        )
    }

    /// A negative cost for a cache entry. (Thrown from the inlinable `PurgeableCache.setValue`.)
    @usableFromInline
    static func negativeCost(_ cost: Int) -> Self {
        Self(.invalidArgument, "cache entry cost \(cost) is negative; expected 0 or more")
    }

    /// A fraction to keep outside 0 through 1 (or not a number).
    static func fractionOutOfRange(_ fraction: Double) -> Self {
        Self(.invalidArgument, "fraction \(fraction) is out of range; expected 0 through 1")
    }

    /// A backing store's dimension of zero or less, or a size that overflows.
    static func invalidDimensions(width: Int, height: Int, bytesPerPixel: Int) -> Self {
        Self(
            .invalidArgument,
            "backing store of \(width) x \(height) x \(bytesPerPixel) bytes per pixel is invalid; "
                + "expected each at least 1 and a total that fits in Int"
        )
    }
}

// MARK: - Lifecycle

extension MemoryPressureError {
    /// `transition` does not start from the app's state `from`.
    static func invalidTransition(
        app: AppIdentifier,
        transition: LifecycleTransition,
        from: AppState,
        accepted: [AppState]
    ) -> Self {
        let names = accepted.map(\.description).joined(separator: ", ")
        return Self(.invalidTransition, "app \(app) cannot \(transition) from state \(from); accepted states: \(names)", app: app)
    }

    /// The app is running `willTerminate`; only the termination can follow.
    static func appTerminating(app: AppIdentifier, transition: LifecycleTransition) -> Self {
        Self(.invalidTransition, "app \(app) cannot \(transition) while it is terminating", app: app)
    }

    /// The app cannot suspend while `count` background tasks are open.
    static func backgroundTasksOpen(app: AppIdentifier, count: Int) -> Self {
        Self(.invalidTransition, "app \(app) cannot suspend with \(count) background task(s) open; end them first", app: app)
    }

    /// No open background task of `app` is `task`.
    static func unknownBackgroundTask(app: AppIdentifier, _ task: BackgroundTaskIdentifier) -> Self {
        Self(.unknownBackgroundTask, "app \(app) has no open background task \(task)", app: app)
    }

    /// Work sent to `app`, which runs no code in `state`.
    static func appNotRunning(app: AppIdentifier, state: AppState) -> Self {
        Self(
            .appNotRunning,
            "app \(app) is \(state) and runs no code; expected it running (inactive, active or background): "
                + "bring it to the foreground or launch it first",
            app: app
        )
    }

    /// An app with this identifier is already registered.
    static func duplicateApp(_ app: AppIdentifier) -> Self {
        Self(.duplicateApp, "an app named \(app) is already registered; expected a unique identifier per app", app: app)
    }
}

// MARK: - Heaps

extension MemoryPressureError {
    /// The heap of `app` was closed; it makes no new buffers.
    static func heapClosed(_ app: AppIdentifier) -> Self {
        Self(.heapClosed, "the heap of app \(app) is closed; it makes no new buffers", app: app)
    }

    /// jemalloc refused an allocation in the heap of `app`.
    static func allocationFailed(_ error: JemallocError, app: AppIdentifier) -> Self {
        Self(
            .allocationFailed,
            "\(error) (byte counts must be 1 or more)",
            app: app,
            errno: error.errno == 0 ? nil : Errno(rawValue: error.errno)
        )
    }
}

extension MemoryPressureError {
    /// jemalloc could not make a heap (an arena) for `app`.
    static func heapUnavailable(_ error: JemallocError, app: AppIdentifier) -> Self {
        Self(
            .allocationFailed,
            "cannot make a heap for app \(app): \(error)",
            app: app,
            errno: error.errno == 0 ? nil : Errno(rawValue: error.errno)
        )
    }
}

extension MemoryPressureError {
    /// An allocation that would take `app`'s heap past its hard limit.
    static func heapOverHardLimit(app: AppIdentifier, bytes: Int, heapBytes: Int, hardLimit: Int) -> Self {
        Self(
            .allocationRefused,
            "app \(app): a heap allocation of \(bytes) bytes is refused: the heap holds \(heapBytes) bytes and "
                + "the app's hard limit is \(hardLimit) bytes; "
                + (hardLimit > heapBytes
                    ? "expected an allocation of at most \(hardLimit - heapBytes) bytes"
                    : "expected the app to free some of its heap before it allocates more"),
            app: app
        )
    }

    /// An allocation larger than any the process could make.
    static func allocationTooLarge(app: AppIdentifier, bytes: Int, maximum: Int) -> Self {
        Self(
            .invalidArgument,
            "app \(app): a heap allocation of \(bytes) bytes is larger than any the process can make; "
                + "expected 1 to \(maximum) bytes",
            app: app
        )
    }

    /// An allocation that would take the process past its budget, with no room made in time.
    static func heapOverBudget(app: AppIdentifier, bytes: Int, footprintBytes: Int, budgetBytes: Int, wait: Duration) -> Self {
        Self(
            .allocationRefused,
            "app \(app): a heap allocation of \(bytes) bytes is refused: the footprint of \(footprintBytes) bytes "
                + "would pass the budget of \(budgetBytes) bytes and no room was made within \(wait); expected at most "
                + "\(max(0, budgetBytes - footprintBytes)) bytes",
            app: app
        )
    }
}

// MARK: - State archive

extension MemoryPressureError {
    /// The archive's directory `path` cannot be used, for `reason`.
    static func stateArchiveUnusable(app: AppIdentifier?, reason: String, path: FilePath) -> Self {
        Self(
            .stateArchiveUnusable,
            "\(stateSubject(app, path)) cannot be used: \(reason); expected a writable directory (created with mode 0700 if missing)",
            app: app
        )
    }

    /// `app` was made without a state archive.
    static func noStateArchive(app: AppIdentifier) -> Self {
        Self(
            .stateArchiveUnusable,
            "\(stateSubject(app, nil)): the app was made without a state archive; register it with a MemorySystem that has an archive directory",
            app: app
        )
    }

    /// A file `operation` failed with `errno` while saving `app`'s state at `path`.
    static func stateWriteFailed(app: AppIdentifier, operation: String, errno: Errno, path: FilePath) -> Self {
        Self(
            .stateNotSaved,
            "\(stateSubject(app, path)) could not be saved (\(operation): \(errno)); the state saved before is kept",
            app: app,
            errno: errno
        )
    }

    /// `app`'s saved state at `path` exists but could not be read.
    static func stateUnreadable(app: AppIdentifier, errno: Errno, path: FilePath) -> Self {
        Self(.stateNotRestored, "\(stateSubject(app, path)) is unreadable: \(errno); the app launches fresh", app: app, errno: errno)
    }

    /// `app`'s saved state at `path` is damaged, for `reason`.
    static func stateCorrupt(app: AppIdentifier, reason: String, path: FilePath) -> Self {
        Self(.stateNotRestored, "\(stateSubject(app, path)) is corrupt: \(reason); the app launches fresh", app: app)
    }

    /// `app`'s state, `size` bytes once encoded, is larger than the archive's `limit`.
    static func stateTooLarge(app: AppIdentifier, size: Int, limit: Int, path: FilePath) -> Self {
        Self(
            .stateNotSaved,
            "\(stateSubject(app, path)) could not be saved: the state file would be \(size) bytes, more than the \(limit)-byte limit; the state saved before is kept",
            app: app
        )
    }

    /// `app`'s saved state at `path` is not read, for `reason` (not a regular file, too large, a link).
    static func stateRefused(app: AppIdentifier, reason: String, path: FilePath) -> Self {
        Self(.stateNotRestored, "\(stateSubject(app, path)) is refused: \(reason); the app launches fresh", app: app)
    }

    /// `app`'s state could not be encoded.
    static func stateEncodingFailed(app: AppIdentifier, reason: String) -> Self {
        Self(.stateNotSaved, "\(stateSubject(app, nil)) could not encode the state: \(reason)", app: app)
    }

    /// Restored bytes could not be decoded as the type asked for.
    static func stateDecodingFailed(reason: String) -> Self {
        Self(.stateNotRestored, "\(stateSubject(nil, nil)) could not decode the restored state: \(reason)")
    }

    /// `state archive of <app> at <path>`, leaving out what is not known.
    private static func stateSubject(_ app: AppIdentifier?, _ path: FilePath?) -> String {
        let subject = app.map { "state archive of \($0)" } ?? "state archive"
        let location = path.map { " at \($0)" } ?? ""
        return subject + location
    }
}

// MARK: - Measurement

extension MemoryPressureError {
    /// `path` does not exist: this kernel or container does not offer it.
    static func kernelFileMissing(_ path: FilePath) -> Self {
        Self(.measurementUnavailable, "\(path) is not present")
    }

    /// `path` exists but could not be opened or read.
    static func kernelFileUnreadable(_ path: FilePath, errno: Errno) -> Self {
        Self(.measurementFailed, "\(path) could not be read: \(errno)", errno: errno)
    }

    /// `path`'s contents, `text`, are not in the format the kernel documents.
    static func kernelFileMalformed(_ path: FilePath, text: String) -> Self {
        let excerpt = text.count > 80 ? String(text.prefix(80)) + "…" : text
        return Self(.measurementFailed, "\(path) is malformed: \(excerpt.debugDescription)")
    }

    /// The process has no memory cgroup, v2 or v1, for `reason`.
    static func noMemoryControlGroup(reason: String) -> Self {
        Self(.measurementUnavailable, "no memory cgroup: \(reason)")
    }

    /// An error opening or reading `path`: a missing file is ``Code/measurementUnavailable``, any
    /// other failure ``Code/measurementFailed`` (swift-system throws only `Errno`; anything else
    /// counts as an I/O error).
    static func kernelFile(_ path: FilePath, opening error: any Error) -> Self {
        let errno = error as? Errno ?? .ioError
        return errno == .noSuchFileOrDirectory ? kernelFileMissing(path) : kernelFileUnreadable(path, errno: errno)
    }
}

// MARK: - Monitor

extension MemoryPressureError {
    /// The monitor's wake-up pipe or thread could not be made.
    static func monitorCouldNotStart(_ errno: Errno) -> Self {
        Self(.monitorCouldNotStart, "pressure monitor could not start its sampling thread: \(errno)", errno: errno)
    }
}

// MARK: - Running

extension MemoryPressureError {
    /// `run()` called while the system runs already.
    static func alreadyRunning() -> Self {
        Self(.alreadyRunning, "memory system is already running; expected one run() at a time (cancel the running one first)")
    }
}

// MARK: - For sample sources of your own

extension MemoryPressureError {
    /// A source of your own (``MemorySampleSource``) whose figures this process will never have:
    /// the monitor logs it once and reads the source no more.
    ///
    /// - Parameter reason: Why, for the log: `"no GPU on this machine"`.
    /// - Returns: An error with the code ``Code/measurementUnavailable``.
    public static func measurementUnavailable(_ reason: String) -> Self {
        Self(.measurementUnavailable, reason)
    }

    /// A source of your own (``MemorySampleSource``) that could not read its figures this time: the
    /// monitor logs the first failure and tries again on the next sample.
    ///
    /// - Parameter reason: Why, for the log.
    /// - Returns: An error with the code ``Code/measurementFailed``.
    public static func measurementFailed(_ reason: String) -> Self {
        Self(.measurementFailed, reason)
    }
}
