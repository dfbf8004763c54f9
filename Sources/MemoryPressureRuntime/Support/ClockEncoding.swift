#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How the library's `Encodable` types write times: every `Duration` as a number of seconds, and
/// every `ContinuousClock.Instant` as a number of seconds on the continuous clock's own timeline.
///
/// On Linux, Swift's `ContinuousClock` is `CLOCK_BOOTTIME`, so an instant is written as seconds since
/// boot (suspended time included), the figure `/proc/uptime` starts with. An instant carries no
/// public offset, so it is placed as `clock_gettime(CLOCK_BOOTTIME)` now plus its distance from
/// `ContinuousClock.now`.
enum ClockEncoding {
    /// `duration` in seconds.
    package static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// `instant` in seconds since boot (`CLOCK_BOOTTIME`).
    package static func secondsSinceBoot(_ instant: ContinuousClock.Instant) -> Double {
        var boot = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        let offset = instant - ContinuousClock.now
        return Double(boot.tv_sec) + Double(boot.tv_nsec) / 1e9 + seconds(offset)
    }
}

extension KeyedEncodingContainer {
    /// Encodes `duration` as a number of seconds.
    package mutating func encode(seconds duration: Duration, forKey key: Key) throws {
        try encode(ClockEncoding.seconds(duration), forKey: key)
    }

    /// Encodes `duration` as a number of seconds, or nothing when it is nil.
    package mutating func encodeIfPresent(seconds duration: Duration?, forKey key: Key) throws {
        try encodeIfPresent(duration.map(ClockEncoding.seconds), forKey: key)
    }

    /// Encodes `instant` as a number of seconds since boot.
    package mutating func encode(secondsSinceBoot instant: ContinuousClock.Instant, forKey key: Key) throws {
        try encode(ClockEncoding.secondsSinceBoot(instant), forKey: key)
    }
}
