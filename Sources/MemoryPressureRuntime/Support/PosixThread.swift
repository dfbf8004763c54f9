#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

/// Starting a thread of our own, outside Dispatch and the Swift cooperative pool, and naming it.
package enum PosixThread {
    /// What the new thread receives: its name and the work to run.
    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts a thread named `name` that runs `body` and ends. The caller joins or detaches it.
    package static func start(named name: String, _ body: @escaping @Sendable () -> Void) throws(Errno) -> pthread_t {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
            PosixThread.nameCallingThread(start.name)
            start.body()
            return nil
        }, start)
        guard status == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw Errno(rawValue: status)
        }
        return thread
    }

    /// Names the calling thread `name`, as `top -H` and `/proc/<pid>/task/<tid>/comm` show it
    /// (`pthread_setname_np` is not visible to Swift without `_GNU_SOURCE`; writing its `comm` file
    /// does the same). A failure leaves the name as it was.
    private static func nameCallingThread(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = name.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
        close(descriptor)
    }

    /// The kernel's identifier of the calling thread (its directory in `/proc/self/task`), read from
    /// the `/proc/thread-self` link (`<pid>/task/<tid>`; `gettid` is not visible to Swift); nil
    /// when it cannot be read.
    static var currentTaskIdentifier: pid_t? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            let count = readlink("/proc/thread-self", buffer.baseAddress!, buffer.count)
            guard count > 0 else { return nil }
            let link = String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: count), as: UTF8.self)
            return link.split(separator: "/").last.flatMap { pid_t($0) }
        }
    }

    /// Whether the thread `task` of this process is running or waiting for a processor (state `R`
    /// in `/proc/self/task/<task>/stat`), not asleep in a wait; true when the file cannot be read.
    static func isRunnable(_ task: pid_t) -> Bool {
        let descriptor = open("/proc/self/task/\(task)/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return true }
        defer { close(descriptor) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) { buffer in
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            guard count > 0 else { return true }
            // "tid (comm) S …": the state follows the last parenthesis (a name may hold one).
            let text = buffer.prefix(count)
            guard let close = text.lastIndex(of: UInt8(ascii: ")")), close + 2 < count else { return true }
            return text[close + 2] == UInt8(ascii: "R")
        }
    }

    /// A token for the calling thread, equal only for the same live thread.
    package static var current: UInt {
        UInt(pthread_self())
    }
}
