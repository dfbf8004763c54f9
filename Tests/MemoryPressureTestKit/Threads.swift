#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The number of threads the process has now: the entries of `/proc/self/task`.
public func processThreadCount() -> Int {
    guard let tasks = opendir("/proc/self/task") else { return 0 }
    defer { closedir(tasks) }
    var count = 0
    while let entry = readdir(tasks) {
        if withUnsafeBytes(of: entry.pointee.d_name, { $0.first.map { UInt8(ascii: "0")...UInt8(ascii: "9") ~= $0 } ?? false }) {
            count += 1
        }
    }
    return count
}

/// The most threads the process had while it watched: a task counts them every millisecond from
/// ``init()`` until ``stop()``, which must be called.
public final class PeakThreadCount: Sendable {
    private let peak = Mutex(processThreadCount())
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    /// Starts watching.
    public init() {
        let task = Task.detached { [self] in
            while !Task.isCancelled {
                let count = processThreadCount()
                peak.withLock { $0 = max($0, count) }
                try? await Task.sleep(for: .milliseconds(1))
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
