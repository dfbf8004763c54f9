import MemoryPressureRuntime
/// A process app's process as it stands: what `MemorySystem.process(of:)` reports.
public struct ProcessAppStatus: Hashable, Sendable, CustomStringConvertible {
    /// Its process id (and process group id).
    public var pid: Int32
    /// Its footprint now: its own memory cgroup's working set, or its resident set corrected by its
    /// proportional set. While it is frozen, the figure read as it was frozen (it cannot change its
    /// memory then).
    public var footprintBytes: Int
    /// Whether it is frozen (its app is suspended).
    public var isFrozen: Bool
    /// How it is frozen while its app is suspended.
    public var freezeMechanism: FreezeMechanism
    /// Its own cgroup directories (memory, then freezer; one on a cgroup v2 host); empty where the
    /// system could make none.
    public var controlGroups: [String]

    /// A status of these parts.
    package init(pid: Int32, footprintBytes: Int, isFrozen: Bool, freezeMechanism: FreezeMechanism, controlGroups: [String]) {
        self.pid = pid
        self.footprintBytes = footprintBytes
        self.isFrozen = isFrozen
        self.freezeMechanism = freezeMechanism
        self.controlGroups = controlGroups
    }

    /// `pid 4242, 12 MiB, frozen by cgroup v2 cgroup.freeze`.
    public var description: String {
        "pid \(pid), \(ByteCount(footprintBytes)), \(isFrozen ? "frozen" : "running"), frozen by \(freezeMechanism)"
    }
}
