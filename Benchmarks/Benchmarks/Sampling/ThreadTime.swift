#if canImport(Glibc)
import Glibc
#endif
import Benchmark
import BenchmarkSupport
import Synchronization

/// CPU time the monitor's thread spent per second of wall-clock time, in nanoseconds: 1,000,000
/// is 0.1 % of one core.
let monitorCPU = BenchmarkMetric.custom("monitor CPU (ns per s)", polarity: .prefersSmaller, useScalingFactor: false)

/// CPU time a thread that only waits in `poll` spent per second of wall-clock time, in
/// nanoseconds: the floor under a monitor that wakes as often.
let pollLoopCPU = BenchmarkMetric.custom("poll loop CPU (ns per s)", polarity: .prefersSmaller, useScalingFactor: false)

/// Samples the monitor published per second.
let samplesPerSecond = BenchmarkMetric.custom("samples per second", polarity: .prefersLarger, useScalingFactor: false)

/// A thread of its own, named `name`, that waits `interval` in `poll` again and again, doing
/// nothing else, until stopped.
final class PollLoop: @unchecked Sendable {
    /// What the loop's thread shares with whoever stops it.
    private final class Context: Sendable {
        let stopped = Atomic<Bool>(false)
        let named = Atomic<Bool>(false)
        let name: String
        let milliseconds: Int32

        init(name: String, milliseconds: Int32) {
            self.name = name
            self.milliseconds = milliseconds
        }
    }

    private let context: Context
    /// Set once, at initialization; joined once, by `stop()`.
    private let thread: pthread_t

    init(name: String, interval: Duration) throws {
        context = Context(name: name, milliseconds: Int32(interval / .milliseconds(1)))
        let retained = Unmanaged.passRetained(context)
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { argument in
            let context = Unmanaged<Context>.fromOpaque(argument!).takeRetainedValue()
            // Named through its comm file: pthread_setname_np is not visible without _GNU_SOURCE.
            let comm = open("/proc/thread-self/comm", O_WRONLY)
            if comm >= 0 {
                _ = context.name.utf8CString.withUnsafeBufferPointer { write(comm, $0.baseAddress, $0.count - 1) }
                close(comm)
            }
            context.named.store(true, ordering: .releasing)
            while !context.stopped.load(ordering: .relaxed) {
                _ = poll(nil, 0, context.milliseconds)
            }
            return nil
        }, retained.toOpaque())
        guard status == 0 else {
            retained.release()
            throw BenchmarkFailure("pthread_create failed: \(status)")
        }
        self.thread = thread
        while !context.named.load(ordering: .acquiring) {
            sleep(for: .milliseconds(1))
        }
    }

    /// Ends the loop and waits for its thread.
    func stop() {
        context.stopped.store(true, ordering: .relaxed)
        pthread_join(thread, nil)
    }
}

/// The time the thread named `name` has spent on a CPU, in nanoseconds, from the first field of
/// its `/proc/self/task/<tid>/schedstat`; nil while no such thread exists.
func cpuNanoseconds(ofThreadNamed name: String) -> Int? {
    guard let tasks = opendir("/proc/self/task") else { return nil }
    defer { closedir(tasks) }
    while let entry = readdir(tasks) {
        let task = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard task.first?.isNumber == true, firstLine(of: "/proc/self/task/\(task)/comm") == name else { continue }
        return firstLine(of: "/proc/self/task/\(task)/schedstat")?.split(separator: " ").first.flatMap { Int($0) }
    }
    return nil
}

/// The first line of a small text file, without its newline.
func firstLine(of path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    guard fgets(&line, Int32(line.count), file) != nil else { return nil }
    return String(decoding: line.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

extension Optional {
    /// The value, which must be there: `what` names it when it is missing.
    func unwrapped(_ what: String) throws -> Wrapped {
        guard let self else { throw BenchmarkFailure("\(what) is missing") }
        return self
    }
}

/// Sleeps the calling thread for `duration`.
func sleep(for duration: Duration) {
    let (seconds, attoseconds) = duration.components
    var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&pause, &remaining) != 0 { pause = remaining }
}
