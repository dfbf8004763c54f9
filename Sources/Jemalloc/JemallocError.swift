#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An error from jemalloc's control interface, naming the key and carrying the errno it returned.
public struct JemallocError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, in terms a caller can act on. Opaque and extensible: new kinds can be added
    /// without breaking a switch.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable, CaseIterable {
            case unknownKey
            case statisticsDisabled
            case invalidValue
            case notPermitted
            case unavailable
            case arenaLimitReached
            case outOfMemory
            case other
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The key does not exist in this build of jemalloc (`ENOENT`).
        public static let unknownKey = Kind(.unknownKey)
        /// jemalloc was built without `--enable-stats`, so no `stats.*` key can be read.
        public static let statisticsDisabled = Kind(.statisticsDisabled)
        /// The value was of the wrong size or out of range (`EINVAL`).
        public static let invalidValue = Kind(.invalidValue)
        /// The key is read-only, or the operation is not permitted now (`EPERM`).
        public static let notPermitted = Kind(.notPermitted)
        /// jemalloc could not complete the request at this moment (`EAGAIN`, `EFAULT`, `EBUSY`).
        public static let unavailable = Kind(.unavailable)
        /// Every arena index is in use, so `arenas.create` cannot make another arena (`EAGAIN` from
        /// that key): a lasting limit, not a passing one.
        public static let arenaLimitReached = Kind(.arenaLimitReached)
        /// jemalloc could not allocate the memory asked for.
        public static let outOfMemory = Kind(.outOfMemory)
        /// Any other errno.
        public static let other = Kind(.other)

        /// Every kind there is, for tests.
        static var all: [Kind] { Base.allCases.map(Kind.init) }

        /// The kind's name, as it is spelled here: `unknownKey`, `outOfMemory`, ….
        public var description: String { base.rawValue }

        /// The reason the error's message gives.
        var reason: String {
            switch base {
            case .unknownKey: "no such key in this build of jemalloc"
            case .statisticsDisabled: "jemalloc was built without statistics (config.stats is false)"
            case .invalidValue: "invalid value or value size"
            case .notPermitted: "operation not permitted"
            case .unavailable: "temporarily unavailable"
            case .arenaLimitReached:
                "limit reached: every arena index is in use (jemalloc makes at most \(Arena.indexLimit) arenas, automatic ones included)"
            case .outOfMemory: "out of memory"
            case .other: "failed"
            }
        }
    }

    /// What went wrong.
    public let kind: Kind
    /// The mallctl name involved, for example `stats.arenas.3.pactive`.
    public let key: String
    /// The errno jemalloc returned (0 when the failure carried none, as with a failed allocation).
    public let errno: Int32

    /// An error of `kind` for `key`, carrying `errno` (0 when there is none).
    public init(kind: Kind, key: String, errno: Int32) {
        self.kind = kind
        self.key = key
        self.errno = errno
    }

    /// Classifies the errno that `mallctl` returned for `key`.
    ///
    /// `statisticsEnabled` is consulted only for a missing `stats.*` key, which in a build without
    /// statistics is the expected outcome rather than a typo.
    public init(key: String, errno: Int32, statisticsEnabled: @autoclosure () -> Bool) {
        let kind: Kind
        switch errno {
        case ENOENT:
            kind = key.hasPrefix("stats.") && !statisticsEnabled() ? .statisticsDisabled : .unknownKey
        case EINVAL: kind = .invalidValue
        case EPERM: kind = .notPermitted
        case EAGAIN where key == MallctlKey.createArena.name: kind = .arenaLimitReached
        case EAGAIN, EFAULT, EBUSY: kind = .unavailable
        case ENOMEM: kind = .outOfMemory
        default: kind = .other
        }
        self.init(kind: kind, key: key, errno: errno)
    }

    /// The message: `jemalloc <key>: <reason>`, and the errno with its text when there is one (a
    /// reached limit gives only the number: `EAGAIN`'s text says "temporarily").
    public var description: String {
        let code = switch (errno, kind) {
        case (0, _): ""
        case (_, .arenaLimitReached): " (errno \(errno))"
        default: " (errno \(errno): \(String(cString: strerror(errno))))"
        }
        return "jemalloc \(key): \(kind.reason)\(code)"
    }
}
