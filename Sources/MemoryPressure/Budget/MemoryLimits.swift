#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging

/// The limits a budget is resolved from and checked against: the machine's memory and the
/// cgroup's, where it has them.
package struct MemoryLimits: Hashable, Sendable {
    /// Physical memory of the machine, in bytes.
    package var physicalBytes: Int
    /// The cgroup's `memory.max`, when it sets one.
    package var controlGroupMaximum: Int?
    /// The cgroup's `memory.high`, when it sets one.
    package var controlGroupHigh: Int?

    /// Limits with the given figures, in bytes; nil where there is no limit.
    package init(physicalBytes: Int, controlGroupMaximum: Int? = nil, controlGroupHigh: Int? = nil) {
        self.physicalBytes = physicalBytes
        self.controlGroupMaximum = controlGroupMaximum
        self.controlGroupHigh = controlGroupHigh
    }

    /// Reads the limits of this machine and of the process's cgroup v2. A cgroup figure that cannot
    /// be read is nil, and the reason is logged once, at `notice`.
    package static func current(logger: Logger = Logger(label: "MemoryPressure.MemoryLimits")) -> MemoryLimits {
        var limits = MemoryLimits(physicalBytes: physicalMemoryBytes)
        do {
            let group = try ControlGroup.current()
            limits.controlGroupMaximum = try group.maximum().byteCount
            limits.controlGroupHigh = try group.high().byteCount
        } catch {
            logger.notice("no cgroup v2 memory limit: \(error)")
        }
        return limits
    }

    /// The machine's physical memory (`_SC_PHYS_PAGES` pages).
    static var physicalMemoryBytes: Int {
        Int(sysconf(Int32(_SC_PHYS_PAGES))) * ProcessMemory.systemPageSize
    }

    /// The cgroup limit a budget is taken from: the lower of `memory.max` and `memory.high`.
    var controlGroupLimit: Int? {
        [controlGroupMaximum, controlGroupHigh].compactMap { $0 }.min()
    }

    /// The largest budget that makes sense, with its name for error messages.
    var ceiling: (bytes: Int, name: String) {
        if let maximum = controlGroupMaximum, maximum < physicalBytes {
            return (maximum, "the cgroup's memory.max")
        }
        return (physicalBytes, "the machine's physical memory")
    }
}
