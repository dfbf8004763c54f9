import Jemalloc
@_spi(Benchmarks) import MemoryPressure
import Logging
import SystemPackage

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Everything `mempressure stats` shows, read once. A figure that could not be read is nil, and
/// the reason is in `unavailable`.
///
/// Encoded with the library's own keys: `jemallocConfiguration` (``JemallocConfiguration``),
/// `jemallocStatistics` (``JemallocStatistics``), `process` (``ProcessMemory``), `cgroup`,
/// `pressure` (``PressureStall``) with the file it was read from in `pressureSource`,
/// `eventSources` (the kernel events a pressure monitor would wait on here), and `unavailable`.
struct StatsSnapshot: Encodable {
    /// The cgroup layout found, the figures of the memory cgroup in it, and the effective limit
    /// with the file it comes from.
    struct Cgroup: Encodable {
        /// `v2`, `v1`, `hybrid` (memory on v1 beside a controller-less cgroup2) or `none`.
        var layout: String
        /// Why there is no memory cgroup, when `layout` is `none`.
        var reason: String?
        /// The process's cgroup2 directory, with or without the memory controller.
        var unifiedDirectory: String?
        var v2: Version2?
        var v1: Version1?
        /// The smallest limit on the path to the root, nil when none is set (or it could not be read:
        /// see `unavailable`).
        var effectiveLimitBytes: Int?
        /// The file the effective limit comes from.
        var effectiveLimitSource: String?
        /// The automatic budget (90% of the effective limit, else of physical memory) and where it comes from.
        var automaticBudgetBytes: Int?
        var automaticBudgetSource: String
        /// The footprint a monitor with the default configuration judges here: `process` (its
        /// resident bytes) or `larger of process and cgroup working set` (the process is alone in
        /// its memory cgroup), with the reason.
        var judgedFootprint: String
        /// Processes of the memory cgroup the OOM killer ended, and the file that counts them
        /// (`memory.events` on v2, `memory.oom_control` on v1).
        var oomKillCount: Int?
        var oomKillSource: String?
    }

    /// A kernel event source a pressure monitor with the default configuration arms here, armed
    /// and closed again to find out.
    struct EventSource: Encodable {
        /// `PSI trigger`, `memory.events watch` or `memory.pressure_level`.
        var name: String
        /// `armed`, `off` (turned off, or not applicable to this layout) or `not armed` (refused).
        var state: String
        /// The file armed or tried, when there is one.
        var path: String?
        /// What is armed (the trigger, the levels), or why nothing is.
        var detail: String

        init(_ status: KernelEventSourceStatus) {
            name = status.kind.name
            state = status.state.rawValue
            path = status.path?.string
            detail = status.detail
        }
    }

    /// The cgroup v2 directory and its limits.
    struct Version2: Encodable {
        var directory: String
        var currentBytes: Int?
        /// Bytes, or nil when the file reads `max` or is missing (see `unavailable`).
        var maxBytes: Int?
        var highBytes: Int?
        var maxIsUnlimited: Bool?
        var highIsUnlimited: Bool?
    }

    /// The v1 memory cgroup directory and its figures; a limit is nil when it is v1's "unlimited"
    /// (the `…IsUnlimited` flag says so) or could not be read.
    struct Version1: Encodable {
        var directory: String
        var usageBytes: Int?
        var limitBytes: Int?
        var limitIsUnlimited: Bool?
        var softLimitBytes: Int?
        var softLimitIsUnlimited: Bool?
        var hierarchicalLimitBytes: Int?
        var hierarchicalLimitIsUnlimited: Bool?
        var totalInactiveFileBytes: Int?
        /// Usage less inactive page cache, as Kubernetes computes the working set.
        var workingSetBytes: Int?
    }

    var jemallocConfiguration: JemallocConfiguration?
    var jemallocStatistics: JemallocStatistics?
    var process: ProcessMemory?
    var cgroup: Cgroup?
    var pressure: PressureStall?
    /// The PSI file read: the cgroup's own file when it has one, else the system-wide file.
    var pressureSource: String
    var eventSources: [EventSource] = []
    /// The zram swap that compression pages suspended apps out to, where one is on.
    var compression: Compression?
    var unavailable: [String] = []

    /// The zram swap devices on, what they hold, and what a byte in swap costs.
    struct Compression: Encodable {
        /// The zram swap devices on (`/dev/zram0`).
        var devices: [String]
        /// The bytes paged out to them, and the memory they spend holding them.
        var originalBytes: Int
        var memoryUsedBytes: Int
        /// What a byte in swap is counted at (the memory used over the bytes held; 1 while they hold nothing).
        var costRatio: Double
        /// This process's bytes in swap (`VmSwap`), and what they are counted at.
        var processSwappedBytes: Int?
        var processCompressedBytes: Int?
    }

    static func take() -> StatsSnapshot {
        let pressurePath = PressureStallSampleSource().path
        var snapshot = StatsSnapshot(pressureSource: pressurePath.string)
        snapshot.jemallocConfiguration = snapshot.attempt { () throws(JemallocError) in try JemallocConfiguration.current() }
        snapshot.jemallocStatistics = snapshot.attempt { () throws(JemallocError) in try JemallocStatistics.current() }
        snapshot.process = snapshot.attempt { () throws(MemoryPressureError) in try ProcessMemory.current() }
        snapshot.cgroup = snapshot.readCgroup()
        snapshot.pressure = snapshot.attempt { () throws(MemoryPressureError) in try PressureStall.read(from: pressurePath) }
        snapshot.eventSources = KernelEventSourceStatus.probe().map(EventSource.init)
        snapshot.compression = snapshot.readCompression()
        return snapshot
    }

    /// The zram swap devices, or the reason compression cannot work here in `unavailable`.
    private mutating func readCompression() -> Compression? {
        guard let space = attempt({ () throws(MemoryPressureError) in try SwapSpace.read() }) else { return nil }
        if let reason = space.unavailableReason {
            unavailable.append("compression: \(reason)")
            return nil
        }
        let swapped = try? SwapSpace.swappedBytes(ofProcess: "self")
        return Compression(
            devices: space.zramDevices.map(\.path),
            originalBytes: space.zram.values.reduce(0) { $0 + $1.originalBytes },
            memoryUsedBytes: space.zram.values.reduce(0) { $0 + $1.memoryUsedBytes },
            costRatio: space.costRatio, processSwappedBytes: swapped,
            processCompressedBytes: swapped.map { space.memoryCost(ofSwapped: $0) }
        )
    }

    /// The layout, the memory cgroup's figures and the effective limit.
    private mutating func readCgroup() -> Cgroup? {
        guard let discovery = attempt({ () throws(MemoryPressureError) in try ControlGroupDiscovery.current() }) else { return nil }
        let reading = MemoryLimits.read(discovery, physicalBytes: MemoryLimits.physicalMemoryBytes, checkingProcesses: true)
        let limits = reading.limits
        let alone = reading.isAloneInControlGroup
        let budget = attempt { () throws(MemoryPressureError) in try MemoryBudget.resolve(.automatic(), limits: limits) }
        var cgroup = Cgroup(
            layout: discovery.layout.rawValue,
            reason: discovery.reason,
            unifiedDirectory: discovery.unifiedDirectory?.string,
            effectiveLimitBytes: limits.controlGroupLimit,
            effectiveLimitSource: limits.controlGroupLimitSource?.description,
            automaticBudgetBytes: budget?.totalBytes,
            automaticBudgetSource: "90% of " + limits.origin(of: .automatic()),
            judgedFootprint: ControlGroupWorkingSetPolicy.whenAlone.takesInWorkingSet(aloneInControlGroup: alone)
                ? "larger of process and cgroup working set (alone in its memory cgroup)"
                : "process (\(discovery.memory == nil ? "no memory cgroup" : "shares its memory cgroup"))"
        )
        switch discovery.memory {
        case .v2(let group, _):
            var figures = Version2(directory: group.directory.string)
            figures.currentBytes = attempt { () throws(MemoryPressureError) in try group.currentBytes() }
            let maximum = attempt { () throws(MemoryPressureError) in try group.maximum() }
            let high = attempt { () throws(MemoryPressureError) in try group.high() }
            figures.maxBytes = maximum?.byteCount
            figures.maxIsUnlimited = maximum.map { $0 == .unlimited }
            figures.highBytes = high?.byteCount
            figures.highIsUnlimited = high.map { $0 == .unlimited }
            cgroup.v2 = figures
            cgroup.oomKillCount = attempt { () throws(MemoryPressureError) in try group.events().oomKill }
            cgroup.oomKillSource = group.directory.appending("memory.events").string
        case .v1(let group):
            var figures = Version1(directory: group.directory.string)
            figures.usageBytes = attempt { () throws(MemoryPressureError) in try group.usageBytes() }
            let limit = attempt { () throws(MemoryPressureError) in try group.limit() }
            let softLimit = attempt { () throws(MemoryPressureError) in try group.softLimit() }
            let statistics = attempt { () throws(MemoryPressureError) in try group.statistics() }
            figures.limitBytes = limit?.byteCount
            figures.limitIsUnlimited = limit.map { $0 == .unlimited }
            figures.softLimitBytes = softLimit?.byteCount
            figures.softLimitIsUnlimited = softLimit.map { $0 == .unlimited }
            figures.hierarchicalLimitBytes = statistics?.hierarchicalLimit.byteCount
            figures.hierarchicalLimitIsUnlimited = statistics.map { $0.hierarchicalLimit == .unlimited }
            figures.totalInactiveFileBytes = statistics?.totalInactiveFileBytes
            if let statistics, let usage = figures.usageBytes {
                figures.workingSetBytes = statistics.workingSetBytes(usageBytes: usage)
            }
            cgroup.v1 = figures
            cgroup.oomKillCount = attempt { () throws(MemoryPressureError) in try group.oomKillCount() }
            cgroup.oomKillSource = group.directory.appending("memory.oom_control").string
        case nil:
            break
        }
        return cgroup
    }

    /// The snapshot as `stats --json` prints it.
    func jsonText() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
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
