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
            case reentrantCall
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
        package static var all: [Code] { Base.allCases.map(Code.init) }

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
        /// A background task to end that is not open (never begun by this app, or already ended).
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
        /// A call made from inside a callback that the call would have to run again: a backing
        /// store's renderer that reads its own store, whose pixels it is drawing. Nothing changed.
        public static let reentrantCall = Code(.reentrantCall)

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

        /// The pressure monitor could not make its wake-up pipe or its sampling thread, or
        /// `MemorySystem.run()` its reclamation thread; ``MemoryPressureError/errno`` says why.
        public static let monitorCouldNotStart = Code(.monitorCouldNotStart)
        /// `MemorySystem.run()` was called while the system was already running.
        public static let alreadyRunning = Code(.alreadyRunning)
        /// Work was sent to an app (`App.perform(_:)`) that is suspended or not running: it runs
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

        package init(bytes: Int, name: String) {
            self.bytes = bytes
            self.name = name
        }
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
    package init(
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

// MARK: - For sample sources of your own

extension MemoryPressureError {
    /// A source of your own (`MemorySampleSource`) whose figures this process will never have:
    /// the monitor logs it once and reads the source no more.
    ///
    /// - Parameter reason: Why, for the log: `"no GPU on this machine"`.
    /// - Returns: An error with the code ``Code/measurementUnavailable``.
    public static func measurementUnavailable(_ reason: String) -> Self {
        Self(.measurementUnavailable, reason)
    }

    /// A source of your own (`MemorySampleSource`) that could not read its figures this time: the
    /// monitor logs the first failure and tries again on the next sample.
    ///
    /// - Parameter reason: Why, for the log.
    /// - Returns: An error with the code ``Code/measurementFailed``.
    public static func measurementFailed(_ reason: String) -> Self {
        Self(.measurementFailed, reason)
    }
}
