#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An error from jemalloc's control interface, naming the key and carrying the errno it returned.
public struct JemallocError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, in terms a caller can act on.
    public enum Kind: Hashable, Sendable {
        /// The key does not exist in this build of jemalloc (`ENOENT`).
        case unknownKey
        /// jemalloc was built without `--enable-stats`, so no `stats.*` key can be read.
        case statisticsDisabled
        /// The value was of the wrong size or out of range (`EINVAL`).
        case invalidValue
        /// The key is read-only, or the operation is not permitted now (`EPERM`).
        case notPermitted
        /// jemalloc could not complete the request at this moment (`EAGAIN`, `EFAULT`, `EBUSY`).
        case unavailable
        /// jemalloc could not allocate the memory asked for.
        case outOfMemory
        /// Any other errno.
        case other
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
        case EAGAIN, EFAULT, EBUSY: kind = .unavailable
        case ENOMEM: kind = .outOfMemory
        default: kind = .other
        }
        self.init(kind: kind, key: key, errno: errno)
    }

    public var description: String {
        let reason: String
        switch kind {
        case .unknownKey: reason = "no such key in this build of jemalloc"
        case .statisticsDisabled: reason = "jemalloc was built without statistics (config.stats is false)"
        case .invalidValue: reason = "invalid value or value size"
        case .notPermitted: reason = "operation not permitted"
        case .unavailable: reason = "temporarily unavailable"
        case .outOfMemory: reason = "out of memory"
        case .other: reason = "failed"
        }
        let code = errno == 0 ? "" : " (errno \(errno): \(String(cString: strerror(errno))))"
        return "jemalloc \(key): \(reason)\(code)"
    }
}
