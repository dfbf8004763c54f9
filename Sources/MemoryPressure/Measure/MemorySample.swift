import Jemalloc

/// One reading of everything the system decides on. A figure the machine does not offer is nil.
///
/// A cheap sample (see ``SampleDepth``) reads only `/proc/self/statm`; its allocator, cgroup
/// and stall figures are nil or empty.
public struct MemorySample: Hashable, Sendable {
    /// When the reading was taken.
    public var time: ContinuousClock.Instant
    /// The process's resident bytes, from `/proc/self/statm`.
    public var residentBytes: Int?
    /// The cgroup's `memory.current`, where the process has a cgroup v2 with a memory controller.
    public var cgroupCurrentBytes: Int?
    /// jemalloc's process-wide statistics, as of this sample's epoch (nil when not refreshed for it).
    public var jemalloc: JemallocStatistics?
    /// The cgroup's `memory.events` counters, where the process has a cgroup v2 with a memory
    /// controller (nil on samples that did not read them).
    public var cgroupEvents: ControlGroupEvents?
    /// Memory pressure stall information, where the kernel offers it.
    public var pressureStall: PressureStall?
    /// How long the pressure monitor took to read this sample: every source it read for it, a cheap
    /// read that the refresh schedule followed with a full one included. Nil for a sample that no
    /// monitor took.
    public var samplingDuration: Duration?

    /// A sample taken at `time` with the figures given; the rest unknown.
    package init(
        time: ContinuousClock.Instant,
        residentBytes: Int? = nil,
        cgroupCurrentBytes: Int? = nil,
        jemalloc: JemallocStatistics? = nil,
        cgroupEvents: ControlGroupEvents? = nil,
        pressureStall: PressureStall? = nil
    ) {
        self.time = time
        self.residentBytes = residentBytes
        self.cgroupCurrentBytes = cgroupCurrentBytes
        self.jemalloc = jemalloc
        self.cgroupEvents = cgroupEvents
        self.pressureStall = pressureStall
    }

    /// The footprint the budget is held against: the process's resident bytes, or jemalloc's
    /// resident bytes when statm could not be read.
    public var footprintBytes: Int? {
        residentBytes ?? jemalloc?.resident
    }
}
