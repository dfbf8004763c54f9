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

/// CPU time per second of a thread that does the least a monitor does, in nanoseconds: waits
/// 10 ms in `poll`, then reads `/proc/self/statm` and parses its resident pages.
let leastMonitorCPU = BenchmarkMetric.custom("least monitor CPU (ns per s)", polarity: .prefersSmaller, useScalingFactor: false)

/// ``pollLoopCPU`` over the seconds the least monitor ran beside the poll loop.
let pollLoopCPUBesideTheLeastMonitor = BenchmarkMetric.custom(
    "poll loop CPU beside the least monitor (ns per s)", polarity: .prefersSmaller, useScalingFactor: false
)

/// How long reading a sample took the monitor, on its own thread, in nanoseconds: the mean of the
/// samples' `samplingDuration`.
let sampleReadInMonitor = BenchmarkMetric.custom("sample read in the monitor (ns)", polarity: .prefersSmaller, useScalingFactor: false)

/// Samples the monitor published per second.
let samplesPerSecond = BenchmarkMetric.custom("samples per second", polarity: .prefersLarger, useScalingFactor: false)

/// A thread of its own, named `name`, that waits `interval` in `poll` again and again until
/// stopped, doing nothing else or, when `readingStatm`, reading `/proc/self/statm` after each wait.
final class PollLoop: @unchecked Sendable {
    /// What the loop's thread shares with whoever stops it.
    private final class Context: Sendable {
        let stopped = Atomic<Bool>(false)
        let named = Atomic<Bool>(false)
        let lastResidentPages = Atomic<Int>(0)
        let name: String
        let milliseconds: Int32
        /// `/proc/self/statm`, kept open, when the loop reads it after each wait; -1 when not.
        let statm: Int32

        init(name: String, milliseconds: Int32, readingStatm: Bool) {
            self.name = name
            self.milliseconds = milliseconds
            statm = readingStatm ? open("/proc/self/statm", O_RDONLY | O_CLOEXEC) : -1
        }

        deinit {
            if statm >= 0 { close(statm) }
        }

        /// The resident pages statm gives now: the second of its numbers.
        func residentPages() -> Int {
            withUnsafeTemporaryAllocation(byteCount: 160, alignment: 1) { buffer in
                let count = pread(statm, buffer.baseAddress, buffer.count, 0)
                var pages = 0
                var field = 0
                for byte in buffer.prefix(max(0, count)) {
                    if byte == UInt8(ascii: " ") {
                        field += 1
                        if field == 2 { break }
                        pages = 0
                    } else {
                        pages = pages * 10 + Int(byte &- UInt8(ascii: "0"))
                    }
                }
                return pages
            }
        }
    }

    private let context: Context
    /// Set once, at initialization; joined once, by `stop()`.
    private let thread: pthread_t

    /// The pages statm gave the loop last, so that its reading is not optimized away.
    var lastResidentPages: Int { context.lastResidentPages.load(ordering: .relaxed) }

    init(name: String, interval: Duration, readingStatm: Bool = false) throws {
        context = Context(name: name, milliseconds: Int32(interval / .milliseconds(1)), readingStatm: readingStatm)
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
                if context.statm >= 0 {
                    context.lastResidentPages.store(context.residentPages(), ordering: .relaxed)
                }
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

/// The CPU time the threads named `first` and `second` spent over `duration` of wall-clock time
/// (the calling thread sleeps meanwhile), in nanoseconds.
func cpuNanoseconds(ofThreadsNamed first: String, _ second: String, over duration: Duration) throws -> (Int, Int) {
    let firstStart = try cpuNanoseconds(ofThreadNamed: first).unwrapped("the thread \(first)")
    let secondStart = try cpuNanoseconds(ofThreadNamed: second).unwrapped("the thread \(second)")
    sleep(for: duration)
    return (
        try cpuNanoseconds(ofThreadNamed: first).unwrapped("the thread \(first)") - firstStart,
        try cpuNanoseconds(ofThreadNamed: second).unwrapped("the thread \(second)") - secondStart
    )
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
