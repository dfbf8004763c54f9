import Jemalloc
import MemoryPressureRuntime

/// One reading of everything the system decides on. A figure the machine does not offer is nil.
///
/// A cheap sample (see ``SampleDepth``) reads only `/proc/self/statm`; its allocator, cgroup
/// and stall figures are nil or empty.
///
/// Encodable as an object: `time` (seconds since boot, see ``encode(to:)``), `residentBytes`,
/// `cgroupCurrentBytes`, `cgroupWorkingSetBytes`, `controlGroupExcessBytes` (when above 0),
/// `processAppBytes`, `footprintBytes`, `heapBytes`, `jemalloc` (the Jemalloc module's
/// `JemallocStatistics`), `cgroupEvents` (``ControlGroupEvents``), `pressureStall`
/// (``PressureStall``), `samplingDurationSeconds` and `allocatorRefreshSeconds` (the duration of
/// the sample's jemalloc epoch refresh, on samples that made one); a figure that is nil is left out.
public struct MemorySample: Hashable, Sendable, Encodable {
    /// When the reading was taken.
    public var time: ContinuousClock.Instant {
        get { moment.instant }
        set { moment = Moment(newValue) }
    }
    /// ``time``, in the fixed-layout form the sampling thread judges it in.
    package var moment: Moment
    /// The process's resident bytes, from `/proc/self/statm`.
    public var residentBytes: Int?
    /// The cgroup's `memory.current`, where the process has a cgroup v2 with a memory controller.
    public var cgroupCurrentBytes: Int?
    /// jemalloc's process-wide statistics, as of the last epoch refresh: full samples refresh it
    /// at most every 10 s (see `allocatorRefreshDuration`); nil on cheap samples.
    public var jemalloc: JemallocStatistics?
    /// How long this sample's jemalloc epoch refresh took; nil for a sample that made none. Its cost
    /// grows with the arenas in the process (about 9 µs each), not with the apps.
    package var allocatorRefreshDuration: Duration?
    /// The cgroup's `memory.events` counters, where the process has a cgroup v2 with a memory
    /// controller (nil on samples that did not read them).
    public var cgroupEvents: ControlGroupEvents?
    /// Memory pressure stall information, where the kernel offers it.
    public var pressureStall: PressureStall?
    /// How long the pressure monitor took to read this sample: every source it read for it, a cheap
    /// read that the refresh schedule followed with a full one included. Nil for a sample that no
    /// monitor took.
    public var samplingDuration: Duration?
    /// The bytes in the hosted apps' heaps (cache payloads, backing stores), counted as they are
    /// allocated, plus the small-allocation charges threads hold ahead (at most 64 KiB per thread
    /// that allocates in heaps; each app's own bytes are exact); nil for a sample that no memory
    /// system took.
    public var heapBytes: Int?
    /// Heap bytes admitted whose pages were not yet faulted in when the sample was read: counted in
    /// ``footprintBytes`` because the allocation under way will make them resident.
    package var heapBytesUnderWay = 0
    /// The cgroup's working set as Kubernetes computes it: usage less inactive page cache (v2
    /// `memory.current` less `memory.stat` `inactive_file`; v1 `memory.usage_in_bytes` less
    /// `total_inactive_file`). What the kernel's OOM killer and a kubelet's eviction defend. Nil on
    /// cheap samples and where the process has no memory cgroup.
    public var cgroupWorkingSetBytes: Int?
    /// What the cgroup's working set held beyond the process's own figure at the last full sample
    /// (kernel memory charged to it, page cache it dirtied), added to ``footprintBytes`` while the
    /// monitor judges the cgroup's count (`PressureMonitor.Configuration.controlGroupWorkingSet`);
    /// 0 otherwise.
    public var controlGroupExcessBytes = 0
    /// The footprints of the memory system's process apps' processes (each its own memory cgroup's
    /// working set, or its resident set corrected by its proportional set), added to
    /// ``footprintBytes``; nil while the system runs none.
    public var processAppBytes: Int?

    /// A sample taken at `time` with the figures given; the rest unknown.
    package init(
        time: ContinuousClock.Instant,
        residentBytes: Int? = nil,
        cgroupCurrentBytes: Int? = nil,
        jemalloc: JemallocStatistics? = nil,
        cgroupEvents: ControlGroupEvents? = nil,
        pressureStall: PressureStall? = nil
    ) {
        self.init(
            moment: Moment(time), residentBytes: residentBytes, cgroupCurrentBytes: cgroupCurrentBytes, jemalloc: jemalloc,
            cgroupEvents: cgroupEvents, pressureStall: pressureStall
        )
    }

    /// A sample taken at `moment` with the figures given; the rest unknown.
    package init(
        moment: Moment,
        residentBytes: Int? = nil,
        cgroupCurrentBytes: Int? = nil,
        jemalloc: JemallocStatistics? = nil,
        cgroupEvents: ControlGroupEvents? = nil,
        pressureStall: PressureStall? = nil
    ) {
        self.moment = moment
        self.residentBytes = residentBytes
        self.cgroupCurrentBytes = cgroupCurrentBytes
        self.jemalloc = jemalloc
        self.cgroupEvents = cgroupEvents
        self.pressureStall = pressureStall
    }

    /// The footprint the budget is held against: the process's resident bytes (or jemalloc's
    /// resident bytes when statm could not be read), with heap allocations under way counted as if
    /// already resident; while the monitor judges the cgroup's count, plus what the cgroup's working
    /// set held beyond that (``controlGroupExcessBytes``), so the larger of the two; plus the
    /// process apps' processes (``processAppBytes``).
    public var footprintBytes: Int? {
        measuredResidentBytes.map { $0 + heapBytesUnderWay + controlGroupExcessBytes + (processAppBytes ?? 0) }
    }

    /// The process's resident bytes as measured: statm's, or jemalloc's when statm could not be read.
    package var measuredResidentBytes: Int? {
        residentBytes ?? jemalloc?.resident
    }
}

extension MemorySample {
    private enum CodingKeys: String, CodingKey {
        case time, residentBytes, cgroupCurrentBytes, cgroupWorkingSetBytes, controlGroupExcessBytes, processAppBytes, footprintBytes, heapBytes
        case jemalloc, cgroupEvents, pressureStall
        case samplingDuration = "samplingDurationSeconds"
        case allocatorRefreshDuration = "allocatorRefreshSeconds"
    }

    /// Encodes the sample's figures and its ``footprintBytes``, leaving out those that are nil.
    /// `time` is a number of seconds on the continuous clock's timeline, which on Linux is
    /// `CLOCK_BOOTTIME`: seconds since boot, as the first figure of `/proc/uptime`.
    /// `samplingDurationSeconds` is a number of seconds.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's error.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(secondsSinceBoot: time, forKey: .time)
        try container.encodeIfPresent(residentBytes, forKey: .residentBytes)
        try container.encodeIfPresent(cgroupCurrentBytes, forKey: .cgroupCurrentBytes)
        try container.encodeIfPresent(cgroupWorkingSetBytes, forKey: .cgroupWorkingSetBytes)
        if controlGroupExcessBytes > 0 {
            try container.encode(controlGroupExcessBytes, forKey: .controlGroupExcessBytes)
        }
        try container.encodeIfPresent(processAppBytes, forKey: .processAppBytes)
        try container.encodeIfPresent(footprintBytes, forKey: .footprintBytes)
        try container.encodeIfPresent(heapBytes, forKey: .heapBytes)
        try container.encodeIfPresent(jemalloc, forKey: .jemalloc)
        try container.encodeIfPresent(cgroupEvents, forKey: .cgroupEvents)
        try container.encodeIfPresent(pressureStall, forKey: .pressureStall)
        try container.encodeIfPresent(seconds: samplingDuration, forKey: .samplingDuration)
        try container.encodeIfPresent(seconds: allocatorRefreshDuration, forKey: .allocatorRefreshDuration)
    }
}

extension MemorySample: CustomStringConvertible {
    /// The sample for people and logs: `footprint 512 MiB (resident 500 MiB, app heaps 100 MiB,
    /// cgroup 530 MiB, cgroup working set 512 MiB, judged with the cgroup's 12 MiB more)`, each
    /// figure left out when unknown.
    public var description: String {
        let parts = [
            residentBytes.map { "resident \(ByteCount($0))" },
            heapBytes.map { "app heaps \(ByteCount($0))" },
            processAppBytes.map { "process apps \(ByteCount($0))" },
            cgroupCurrentBytes.map { "cgroup \(ByteCount($0))" },
            cgroupWorkingSetBytes.map { "cgroup working set \(ByteCount($0))" },
            controlGroupExcessBytes > 0 ? "judged with the cgroup's \(ByteCount(controlGroupExcessBytes)) more" : nil,
        ].compactMap(\.self)
        let footprint = footprintBytes.map { "footprint \(ByteCount($0))" } ?? "footprint unknown"
        return parts.isEmpty ? footprint : "\(footprint) (\(parts.joined(separator: ", ")))"
    }
}
