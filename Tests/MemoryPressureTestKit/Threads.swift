#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The number of threads the process has now: the `Threads:` line of `/proc/self/status`, read with
/// `open` and `read` into a buffer of our own (`opendir` would call the C library's `malloc`).
public func processThreadCount() -> Int {
    let descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return 0 }
    defer { close(descriptor) }
    var bytes = [UInt8](repeating: 0, count: 4_096)
    let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    guard count > 0 else { return 0 }
    let text = String(decoding: bytes.prefix(count), as: UTF8.self)
    guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") }) else { return 0 }
    return Int(line.dropFirst("Threads:".count).trimmingPrefix(while: \.isWhitespace)) ?? 0
}

/// The most threads the process had while it watched: a task counts them every millisecond from
/// ``init()`` until ``stop()``, which must be called.
public final class PeakThreadCount: Sendable {
    private let peak = Mutex(processThreadCount())
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    /// Starts watching.
    public init() {
        let task = Task.detached { [self] in
            // The kernel's count of threads is the subject and nothing announces a thread's start:
            // it is sampled, every millisecond, until the watch is stopped (or an hour has passed).
            _ = await poll(every: .milliseconds(1), within: .seconds(3_600)) {
                let count = processThreadCount()
                peak.withLock { $0 = max($0, count) }
                return false
            }
        }
        watcher.withLock { $0 = task }
    }

    /// Stops watching and returns the peak, this call's own count included.
    public func stop() async -> Int {
        let count = processThreadCount()
        let watcher = watcher.withLock { $0.take() }
        watcher?.cancel()
        await watcher?.value
        return peak.withLock { max($0, count) }
    }
}
