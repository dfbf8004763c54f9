#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import SystemPackage

/// What other threads say to a sampling thread: sample now, or stop. Each request also wakes the
/// thread from its `poll` through a non-blocking pipe, closed when the last reference goes away.
final class SamplingControl: Sendable {
    /// Readable while a wake-up is pending.
    let wakeDescriptor: Int32
    /// Written to wake the thread.
    private let signalDescriptor: Int32
    private let stopRequested = Atomic<Bool>(false)
    private let sampleRequested = Atomic<Bool>(false)

    init() throws(Errno) {
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
        (wakeDescriptor, signalDescriptor) = descriptors
    }

    var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }

    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        wake()
    }

    func requestSample() {
        sampleRequested.store(true, ordering: .releasing)
        wake()
    }

    /// Whether a sample was requested since the last call.
    func takeSampleRequest() -> Bool {
        sampleRequested.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// Clears the pending wake-ups, after `poll` reported them.
    func drainWake() {
        var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while read(wakeDescriptor, &bytes, MemoryLayout.size(ofValue: bytes)) > 0 {}
    }

    /// Writes a byte to the pipe; when the pipe is full a wake-up is already pending.
    private func wake() {
        var byte: UInt8 = 1
        _ = write(signalDescriptor, &byte, 1)
    }

    deinit {
        close(wakeDescriptor)
        close(signalDescriptor)
    }
}
