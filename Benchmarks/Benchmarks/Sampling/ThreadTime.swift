#if canImport(Glibc)
import Glibc
#endif
import Benchmark
import BenchmarkSupport

/// CPU time the monitor's thread spent per second of wall-clock time, in nanoseconds: 1,000,000
/// is 0.1 % of one core.
let monitorCPU = BenchmarkMetric.custom("monitor CPU (ns per s)", polarity: .prefersSmaller, useScalingFactor: false)

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
