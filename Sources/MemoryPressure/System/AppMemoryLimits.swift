import MemoryPressureRuntime
import MemoryPressureLifecycle
/// An app's own memory limits, like jetsam's: a soft limit that sends the app a memory warning and
/// a hard limit that terminates it (reason `perAppLimit`), one pair while the app is in the
/// foreground (jetsam's "active" limit: active or inactive) and one while it is not (jetsam's
/// "inactive" limit: background or suspended).
public struct AppMemoryLimits: Hashable, Sendable {
    /// A soft and a hard limit, in bytes of the app's footprint; nil for no limit.
    public struct Limit: Hashable, Sendable {
        /// Over this, the app is sent a memory warning (once per crossing).
        public let softBytes: Int?
        /// A heap allocation past this is refused; over it by declared costs outside the heap, the
        /// app is terminated.
        public let hardBytes: Int?

        /// No limit.
        public static let none = Limit(checkedSoft: nil, hard: nil)

        /// Limits checked to be positive, with the soft one below the hard one.
        ///
        /// - Parameters:
        ///   - softBytes: Over this the app is warned; nil for no soft limit.
        ///   - hardBytes: The most the app may hold; nil for no hard limit.
        /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` (`invalidConfiguration`) when a limit is not positive or
        ///   the soft limit is not below the hard one.
        public init(softBytes: Int? = nil, hardBytes: Int? = nil) throws(MemoryPressureError) {
            for (name, value) in [("soft", softBytes), ("hard", hardBytes)] {
                if let value, value <= 0 { throw .appLimitNotPositive(name, bytes: value) }
            }
            if let softBytes, let hardBytes, softBytes >= hardBytes {
                throw .appSoftLimitNotBelowHard(softBytes: softBytes, hardBytes: hardBytes)
            }
            self.init(checkedSoft: softBytes, hard: hardBytes)
        }

        private init(checkedSoft soft: Int?, hard: Int?) {
            softBytes = soft
            hardBytes = hard
        }
    }

    /// The limits while the app is active or inactive.
    public var foreground: Limit
    /// The limits while the app is in the background or suspended.
    public var background: Limit

    /// No limits in any state.
    public static let none = AppMemoryLimits(foreground: .none, background: .none)

    /// Limits for the foreground and the background.
    ///
    /// - Parameters:
    ///   - foreground: The limits while the app is active or inactive.
    ///   - background: The limits while the app is in the background or suspended.
    public init(foreground: Limit = .none, background: Limit = .none) {
        self.foreground = foreground
        self.background = background
    }

    /// The limits that apply in `state`; nil for an app that is not running.
    package func limit(in state: AppState) -> Limit? {
        switch state {
        case .active, .inactive: foreground
        case .background, .suspended: background
        case .notRunning: nil
        }
    }
}
