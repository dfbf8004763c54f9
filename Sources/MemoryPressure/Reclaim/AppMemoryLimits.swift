/// An app's own memory limits, like jetsam's: a soft limit that sends the app a memory warning and
/// a hard limit that terminates it (reason `perAppLimit`), one pair while the app is in the
/// foreground (jetsam's "active" limit: active or inactive) and one while it is not (jetsam's
/// "inactive" limit: background or suspended).
public struct AppMemoryLimits: Hashable, Sendable {
    /// A soft and a hard limit, in bytes of the app's footprint; nil for no limit.
    public struct Limit: Hashable, Sendable {
        /// Over this, the app is sent a memory warning (once per crossing).
        public let softBytes: Int?
        /// Over this, the app is terminated.
        public let hardBytes: Int?

        /// No limit.
        public static let none = Limit(checkedSoft: nil, hard: nil)

        /// Limits checked to be positive, with the soft one below the hard one.
        public init(softBytes: Int? = nil, hardBytes: Int? = nil) throws(AppMemoryLimitsError) {
            for (name, value) in [("soft", softBytes), ("hard", hardBytes)] {
                if let value, value <= 0 { throw AppMemoryLimitsError(limit: name, bytes: value, problem: .notPositive) }
            }
            if let softBytes, let hardBytes, softBytes >= hardBytes {
                throw AppMemoryLimitsError(limit: "soft", bytes: softBytes, problem: .notBelowHard(hardBytes))
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
    public init(foreground: Limit = .none, background: Limit = .none) {
        self.foreground = foreground
        self.background = background
    }

    /// The limits that apply in `state`; nil for an app that is not running.
    public func limit(in state: AppState) -> Limit? {
        switch state {
        case .active, .inactive: foreground
        case .background, .suspended: background
        case .notRunning: nil
        }
    }
}

/// A per-app limit that was rejected.
public struct AppMemoryLimitsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with it.
    public enum Problem: Hashable, Sendable {
        /// Zero or negative.
        case notPositive
        /// The soft limit is not below the hard limit, given here.
        case notBelowHard(Int)
    }

    /// Which limit: "soft" or "hard".
    public let limit: String
    /// The value given.
    public let bytes: Int
    /// What is wrong with it.
    public let problem: Problem

    public var description: String {
        switch problem {
        case .notPositive:
            "per-app \(limit) limit of \(bytes) bytes is not positive; expected 1 byte or more"
        case .notBelowHard(let hard):
            "per-app soft limit of \(bytes) bytes is not below the hard limit of \(hard) bytes; expected soft < hard"
        }
    }
}
