import Jemalloc
import MemoryPressure
import SystemPackage

/// Everything `mempressure stats` shows, read once. A figure that could not be read is nil, and
/// the reason is in `unavailable`.
struct StatsSnapshot: Encodable {
    struct Jemalloc: Encodable {
        var version: String
        var statisticsEnabled: Bool
        var automaticArenas: UInt32
        var arenas: UInt32
        var dirtyDecayMilliseconds: Int
        var muzzyDecayMilliseconds: Int
        var backgroundThread: Bool
        var threadCache: Bool
        var pageSizeBytes: Int
        var oversizeThresholdBytes: Int
        var allocatedBytes: Int?
        var activeBytes: Int?
        var residentBytes: Int?
        var mappedBytes: Int?
        var retainedBytes: Int?
        var metadataBytes: Int?
    }

    struct Process: Encodable {
        var residentBytes: Int
        var virtualBytes: Int
        var sharedBytes: Int
    }

    struct Cgroup: Encodable {
        var directory: String
        var currentBytes: Int?
        /// Bytes, or nil when the file reads `max` or is missing (see `unavailable`).
        var maxBytes: Int?
        var highBytes: Int?
        var maxIsUnlimited: Bool?
        var highIsUnlimited: Bool?
    }

    struct Pressure: Encodable {
        var source: String
        var someAverage10: Double
        var fullAverage10: Double
        var someTotalMicroseconds: UInt64
        var fullTotalMicroseconds: UInt64
    }

    var jemalloc: Jemalloc?
    var process: Process?
    var cgroup: Cgroup?
    var pressure: Pressure?
    var unavailable: [String] = []

    static func take() -> StatsSnapshot {
        var snapshot = StatsSnapshot()
        snapshot.jemalloc = snapshot.attempt { () throws(JemallocError) in try readJemalloc() }
        snapshot.process = snapshot.attempt { () throws(MemoryPressureError) in
            let memory = try ProcessMemory.current()
            return Process(residentBytes: memory.residentBytes, virtualBytes: memory.virtualBytes, sharedBytes: memory.sharedBytes)
        }
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
        snapshot.pressure = snapshot.attempt { () throws(MemoryPressureError) in try readPressure(PressureStallSampleSource().path) }
        return snapshot
    }

    private static func readJemalloc() throws(JemallocError) -> Jemalloc {
        let configuration = try JemallocConfiguration.current()
        var figures = Jemalloc(
            version: configuration.version,
            statisticsEnabled: configuration.statisticsEnabled,
            automaticArenas: configuration.automaticArenaCount,
            arenas: configuration.arenaCount,
            dirtyDecayMilliseconds: configuration.dirtyDecayMilliseconds,
            muzzyDecayMilliseconds: configuration.muzzyDecayMilliseconds,
            backgroundThread: configuration.backgroundThread,
            threadCache: configuration.threadCache,
            pageSizeBytes: configuration.pageSize,
            oversizeThresholdBytes: configuration.oversizeThreshold
        )
        let statistics = try JemallocStatistics.current()
        figures.allocatedBytes = statistics.allocated
        figures.activeBytes = statistics.active
        figures.residentBytes = statistics.resident
        figures.mappedBytes = statistics.mapped
        figures.retainedBytes = statistics.retained
        figures.metadataBytes = statistics.metadata
        return figures
    }

    /// PSI from `path`: the cgroup's own file when it has one, else the system-wide file.
    private static func readPressure(_ path: FilePath) throws(MemoryPressureError) -> Pressure {
        let stall = try PressureStall.read(from: path)
        return Pressure(
            source: path.string,
            someAverage10: stall.some.average10,
            fullAverage10: stall.full.average10,
            someTotalMicroseconds: stall.some.totalMicroseconds,
            fullTotalMicroseconds: stall.full.totalMicroseconds
        )
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
