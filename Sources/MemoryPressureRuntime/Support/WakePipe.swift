#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

/// A non-blocking pipe that wakes a thread waiting in `poll`: any thread writes a byte, the waiting
/// thread sees the read end readable and drains it. Closed when the last reference goes away.
package final class WakePipe: Sendable {
    /// Readable while a wake-up is pending: the descriptor to `poll` for `POLLIN`.
    package let descriptor: Int32
    /// Written to wake the thread.
    private let signalDescriptor: Int32

    package init() throws(Errno) {
        var descriptors: (Int32, Int32) = (-1, -1)
        let status = withUnsafeMutableBytes(of: &descriptors) {
            pipe($0.baseAddress!.assumingMemoryBound(to: Int32.self))
        }
        guard status == 0 else { throw Errno(rawValue: errno) }
        for descriptor in [descriptors.0, descriptors.1] {
            guard fcntl(descriptor, F_SETFD, FD_CLOEXEC) == 0, fcntl(descriptor, F_SETFL, O_NONBLOCK) == 0 else {
                let failure = Errno(rawValue: errno)
                close(descriptors.0)
                close(descriptors.1)
                throw failure
            }
        }
        (descriptor, signalDescriptor) = descriptors
    }

    /// Writes a byte to the pipe; when the pipe is full a wake-up is already pending.
    package func wake() {
        var byte: UInt8 = 1
        _ = write(signalDescriptor, &byte, 1)
    }

    /// Clears the pending wake-ups, after `poll` reported them.
    package func drain() {
        var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while read(descriptor, &bytes, MemoryLayout.size(ofValue: bytes)) > 0 {}
    }

    /// Waits until the pipe is woken or `deadline` passes (never, for nil), whichever is first, and
    /// drains it.
    package func wait(until deadline: ContinuousClock.Instant?) {
        var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        if poll(&descriptors, 1, Self.milliseconds(until: deadline)) > 0 { drain() }
    }

    /// The `poll` timeout that reaches `deadline`: whole milliseconds, rounded up so that a wait
    /// never ends early; -1 (no limit) for nil. A deadline further than `Int32.max` milliseconds
    /// (about 24.8 days) gives `Int32.max`: the caller wakes then and waits again.
    package static func milliseconds(until deadline: ContinuousClock.Instant?) -> Int32 {
        guard let deadline else { return -1 }
        let remaining = deadline - .now
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        // A deadline a configured interval of `Duration.seconds(Int64.max)` away overflowed the
        // product (a trap on the monitor's thread): every interval above zero is accepted.
        guard seconds < Int64(Int32.max) / 1_000 else { return .max }
        let milliseconds = seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }

    deinit {
        close(descriptor)
        close(signalDescriptor)
    }
}
