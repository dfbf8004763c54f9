import Jemalloc
@_spi(Benchmarks) import MemoryPressure
import SystemPackage

/// Everything `mempressure stats` shows, read once. A figure that could not be read is nil, and
/// the reason is in `unavailable`.
///
/// Encoded with the library's own keys: `jemallocConfiguration` (``JemallocConfiguration``),
/// `jemallocStatistics` (``JemallocStatistics``), `process` (``ProcessMemory``), `cgroup`,
/// `pressure` (``PressureStall``) with the file it was read from in `pressureSource`, and
/// `unavailable`.
struct StatsSnapshot: Encodable {
    /// The cgroup's directory and limits, which no library value holds together.
    struct Cgroup: Encodable {
        var directory: String
        var currentBytes: Int?
        /// Bytes, or nil when the file reads `max` or is missing (see `unavailable`).
        var maxBytes: Int?
        var highBytes: Int?
        var maxIsUnlimited: Bool?
        var highIsUnlimited: Bool?
    }

    var jemallocConfiguration: JemallocConfiguration?
    var jemallocStatistics: JemallocStatistics?
    var process: ProcessMemory?
    var cgroup: Cgroup?
    var pressure: PressureStall?
    /// The PSI file read: the cgroup's own file when it has one, else the system-wide file.
    var pressureSource: String
    var unavailable: [String] = []

    static func take() -> StatsSnapshot {
        let pressurePath = PressureStallSampleSource().path
        var snapshot = StatsSnapshot(pressureSource: pressurePath.string)
        snapshot.jemallocConfiguration = snapshot.attempt { () throws(JemallocError) in try JemallocConfiguration.current() }
        snapshot.jemallocStatistics = snapshot.attempt { () throws(JemallocError) in try JemallocStatistics.current() }
        snapshot.process = snapshot.attempt { () throws(MemoryPressureError) in try ProcessMemory.current() }
        let group = snapshot.attempt { () throws(MemoryPressureError) in try ControlGroup.current() }
        if let group {
            var cgroup = Cgroup(directory: group.directory.string)
            cgroup.currentBytes = snapshot.attempt { () throws(MemoryPressureError) in try group.currentBytes() }
            let maximum = snapshot.attempt { () throws(MemoryPressureError) in try group.maximum() }
            let high = snapshot.attempt { () throws(MemoryPressureError) in try group.high() }
            cgroup.maxBytes = maximum?.byteCount
            cgroup.maxIsUnlimited = maximum.map { $0 == .unlimited }
            cgroup.highBytes = high?.byteCount
            cgroup.highIsUnlimited = high.map { $0 == .unlimited }
            snapshot.cgroup = cgroup
        }
        snapshot.pressure = snapshot.attempt { () throws(MemoryPressureError) in try PressureStall.read(from: pressurePath) }
        return snapshot
    }

    /// Runs `read`, recording its error's description in `unavailable` when it fails.
    private mutating func attempt<Value, Failure: Error & CustomStringConvertible>(
        _ read: () throws(Failure) -> Value
    ) -> Value? {
        do {
            return try read()
        } catch {
            unavailable.append(error.description)
            return nil
        }
    }
}
