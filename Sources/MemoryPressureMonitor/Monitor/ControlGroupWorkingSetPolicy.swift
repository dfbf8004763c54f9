/// When the footprint a monitor judges takes in the cgroup's working set
/// (``/MemoryPressureMeasurement/MemorySample/cgroupWorkingSetBytes``): usage less inactive page cache, the figure a kubelet
/// evicts pods on and the kernel's OOM killer defends. It holds, besides the process's resident
/// memory, kernel memory charged to the cgroup (socket buffers, page tables) and page cache the
/// process dirtied. While it is taken in, the footprint is the larger of the two figures.
///
/// This enumeration grows as the library does (new events, reasons and steps come with new
/// capabilities): a `switch` over it needs a `default` or `@unknown default` case, so that a
/// newer version of the library does not break it. See “Types That Grow” in the MemoryPressure documentation.
public enum ControlGroupWorkingSetPolicy: Hashable, Sendable, CustomStringConvertible {
    /// While the process is the only one in its memory cgroup (its `cgroup.procs` lists it alone),
    /// as a container's one process is: then the cgroup's count is the process's own. Checked when
    /// the monitor starts and at each reading of the limits. The default.
    case whenAlone
    /// Always, for a process that answers for everything in its cgroup (its helpers' memory too).
    case always
    /// Never: the process's own figure alone.
    case never

    /// `when alone`, `always` or `never`.
    public var description: String {
        switch self {
        case .whenAlone: "when alone"
        case .always: "always"
        case .never: "never"
        }
    }

    /// Whether the working set is taken in, for a process that is (or is not) alone in its cgroup.
    package func takesInWorkingSet(aloneInControlGroup alone: Bool) -> Bool {
        switch self {
        case .whenAlone: alone
        case .always: true
        case .never: false
        }
    }
}
