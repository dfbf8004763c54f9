import SystemPackage
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A thread of the supervisor's that waits in `poll` on descriptors its owner gives, and a pipe
/// that ``stop()`` writes to: the owner (the control socket, the log router, the metrics server)
/// starts it and stops it, and `stop()` returns once the thread has ended.
final class PollingThread: Sendable {
    /// What the thread does each time `poll` returns: given the descriptors that are ready, it
    /// returns the descriptors to wait on next. It runs on the thread alone.
    typealias Body = @Sendable (_ ready: [pollfd]) -> [pollfd]

    private let wake: (read: Int32, write: Int32)
    private let thread: Mutex<pthread_t?> = Mutex(nil)
    private let stopping: StopFlag

    /// Starts the thread waiting on `initial`.
    init(name: String, waitingOn initial: [pollfd], body: @escaping Body) throws(Errno) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw Errno(rawValue: errno) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        wake = (ends[0], ends[1])
        let stopping = StopFlag()
        self.stopping = stopping
        let work = Work(wake: ends[0], stopping: stopping, initial: initial, body: body)
        let context = Unmanaged.passRetained(work).toOpaque()
        var handle = pthread_t()
        let status = pthread_create(&handle, nil, { context in
            Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<Work>.fromOpaque(context).release()
            close(ends[0])
            close(ends[1])
            throw Errno(rawValue: status)
        }
        thread.withLock { $0 = handle }
    }

    /// Wakes the thread, which calls its body with no descriptor ready, so that it may wait on a
    /// new set.
    func nudge() {
        var byte: UInt8 = 0
        _ = write(wake.write, &byte, 1)
    }

    /// Ends the thread and waits for it; later calls do nothing.
    func stop() {
        guard let handle = thread.withLock({ thread -> pthread_t? in
            defer { thread = nil }
            return thread
        }) else { return }
        stopping.value.store(true, ordering: .sequentiallyConsistent)
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        pthread_join(handle, nil)
        close(wake.read)
        close(wake.write)
    }

    deinit { stop() }

    private final class Work: Sendable {
        let wake: Int32
        let stopping: StopFlag
        let initial: [pollfd]
        let body: Body

        init(wake: Int32, stopping: StopFlag, initial: [pollfd], body: @escaping Body) {
            (self.wake, self.stopping, self.initial, self.body) = (wake, stopping, initial, body)
        }

        func run() {
            var waiting = initial
            while true {
                var descriptors = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)] + waiting
                let count = poll(&descriptors, nfds_t(descriptors.count), -1)
                if count < 0 {
                    if errno == EINTR { continue }
                    return
                }
                if descriptors[0].revents != 0 {
                    var drained = [UInt8](repeating: 0, count: 64)
                    while drained.withUnsafeMutableBytes({ read(wake, $0.baseAddress, $0.count) }) > 0 {}
                    if stopping.value.load(ordering: .sequentiallyConsistent) { return }
                    waiting = body([])
                    continue
                }
                waiting = body(descriptors.dropFirst().filter { $0.revents != 0 })
            }
        }
    }
}

/// Writes all of `bytes` to `descriptor`, retrying after signals; false when it fails (a reader
/// gone, a full non-blocking socket).
@discardableResult
func writeFully(_ descriptor: Int32, _ bytes: some Collection<UInt8>) -> Bool {
    var rest = Array(bytes)[...]
    while !rest.isEmpty {
        let written = rest.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if written < 0, errno == ENOTSOCK {
            let plain = rest.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if plain < 0, errno == EINTR { continue }
            guard plain > 0 else { return false }
            rest = rest.dropFirst(plain)
            continue
        }
        if written < 0, errno == EINTR { continue }
        guard written > 0 else { return false }
        rest = rest.dropFirst(written)
    }
    return true
}

/// A flag the owner of a thread sets and the thread reads.
final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// `accept`, the new descriptor close-on-exec.
func acceptClosingOnExec(_ listener: Int32) -> Int32 {
    let client = accept(listener, nil, nil)
    if client >= 0 { _ = fcntl(client, F_SETFD, FD_CLOEXEC) }
    return client
}
