#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import MemoryPressureMeasurement

/// The limits a budget is resolved from and checked against: the machine's memory and the
/// cgroup's, where it has them.
package struct MemoryLimits: Hashable, Sendable {
    /// Physical memory of the machine, in bytes.
    package var physicalBytes: Int
    /// The cgroup's effective hard limit (the smallest `memory.max` on the path to the root on v2,
    /// `hierarchical_memory_limit` on v1), when one is set.
    package var controlGroupMaximum: Int?
    /// The cgroup's effective `memory.high` (the smallest on the path to the root), when one is set.
    package var controlGroupHigh: Int?
    /// Where ``controlGroupMaximum`` was read, when it was read from a file.
    package var controlGroupMaximumSource: ControlGroupLimitSource?
    /// Where ``controlGroupHigh`` was read, when it was read from a file.
    package var controlGroupHighSource: ControlGroupLimitSource?

    /// Limits with the given figures, in bytes; nil where there is no limit.
    package init(
        physicalBytes: Int,
        controlGroupMaximum: Int? = nil,
        controlGroupHigh: Int? = nil,
        controlGroupMaximumSource: ControlGroupLimitSource? = nil,
        controlGroupHighSource: ControlGroupLimitSource? = nil
    ) {
        self.physicalBytes = physicalBytes
        self.controlGroupMaximum = controlGroupMaximum
        self.controlGroupHigh = controlGroupHigh
        self.controlGroupMaximumSource = controlGroupMaximumSource
        self.controlGroupHighSource = controlGroupHighSource
    }

    /// Reads the limits of this machine and the effective limits of the process's memory cgroup,
    /// v2 or v1, wherever it is mounted. When there is no memory cgroup, or a limit on its path
    /// cannot be read, the cgroup figures are nil and the reason is logged once, at `notice`.
    package static func current(logger: Logger = Logger(label: "MemoryPressure.MemoryLimits")) -> MemoryLimits {
        let reading = readCurrent(checkingProcesses: false)
        if let problem = reading.problem { logger.notice("no cgroup memory limit: \(problem)") }
        return reading.limits
    }

    /// The limits of a discovered layout on a machine of `physicalBytes`, logging why there are
    /// none at `notice`.
    package static func reading(
        _ discovery: ControlGroupDiscovery,
        physicalBytes: Int,
        logger: Logger = Logger(label: "MemoryPressure.MemoryLimits")
    ) -> MemoryLimits {
        let reading = read(discovery, physicalBytes: physicalBytes)
        if let problem = reading.problem { logger.notice("no cgroup memory limit: \(problem)") }
        return reading.limits
    }

    /// The limits of the process's own cgroup, found afresh from `/proc/self` (a process can be
    /// moved), on this machine; with `checkingProcesses`, whether the process is alone in it.
    static func readCurrent(checkingProcesses: Bool) -> MemoryLimitsReader.Reading {
        do {
            return read(try ControlGroupDiscovery.current(), physicalBytes: physicalMemoryBytes, checkingProcesses: checkingProcesses)
        } catch {
            return MemoryLimitsReader.Reading(limits: MemoryLimits(physicalBytes: physicalMemoryBytes), problem: "\(error)")
        }
    }

    /// The limits of a discovered layout on a machine of `physicalBytes`, and why the cgroup's are
    /// missing when they cannot be read (no memory cgroup, an unreadable limit file). With
    /// `checkingProcesses`, it also reads the cgroup's `cgroup.procs` to tell whether the process
    /// is alone in it.
    package static func read(
        _ discovery: ControlGroupDiscovery, physicalBytes: Int, checkingProcesses: Bool = false
    ) -> MemoryLimitsReader.Reading {
        var limits = MemoryLimits(physicalBytes: physicalBytes)
        guard let group = discovery.memory else {
            return MemoryLimitsReader.Reading(limits: limits, problem: discovery.reason ?? "no memory cgroup")
        }
        do {
            let effective = try group.effectiveLimits()
            limits.controlGroupMaximum = effective.maximum?.bytes
            limits.controlGroupMaximumSource = effective.maximum?.source
            limits.controlGroupHigh = effective.high?.bytes
            limits.controlGroupHighSource = effective.high?.source
        } catch {
            return MemoryLimitsReader.Reading(limits: limits, problem: "\(error)")
        }
        return MemoryLimitsReader.Reading(limits: limits, isAloneInControlGroup: checkingProcesses && group.holdsOnlyThisProcess)
    }

    /// The machine's physical memory (`_SC_PHYS_PAGES` pages).
    package static var physicalMemoryBytes: Int {
        Int(sysconf(Int32(_SC_PHYS_PAGES))) * ProcessMemory.systemPageSize
    }

    /// The cgroup limit a budget is taken from: the lower of the effective maximum and high.
    package var controlGroupLimit: Int? {
        [controlGroupMaximum, controlGroupHigh].compactMap { $0 }.min()
    }

    /// Where ``controlGroupLimit`` was read: the file of the lower of the two (the maximum's on a tie).
    package var controlGroupLimitSource: ControlGroupLimitSource? {
        guard let limit = controlGroupLimit else { return nil }
        return limit == controlGroupMaximum ? controlGroupMaximumSource : controlGroupHighSource
    }

    /// Where a budget from `source` takes its bytes, as `mempressure stats` and log lines say it:
    /// a file, "physical memory" or "fixed".
    package func origin(of source: MemoryBudget.Source) -> String {
        switch source {
        case .bytes: return "fixed"
        case .physicalMemory: return "physical memory"
        case .controlGroup, .automatic:
            guard controlGroupLimit != nil else { return "physical memory" }
            return controlGroupLimitSource?.description ?? "the cgroup's limit"
        }
    }

    /// The largest budget that makes sense, with its name for error messages.
    var ceiling: (bytes: Int, name: String) {
        if let maximum = controlGroupMaximum, maximum < physicalBytes {
            return (maximum, "the cgroup's \(controlGroupMaximumSource?.name ?? "memory.max")")
        }
        return (physicalBytes, "the machine's physical memory")
    }
}

/// How limits are read while a monitor runs: from the process's own cgroup, or (in tests) from a
/// given layout.
package struct MemoryLimitsReader: Sendable {
    /// Limits as read, and why the cgroup's are missing when they could not be read.
    package struct Reading: Hashable, Sendable {
        package var limits: MemoryLimits
        package var problem: String?
        /// Whether the process is the only one in its memory cgroup, so the cgroup's count is its own.
        package var isAloneInControlGroup = false

        package init(limits: MemoryLimits, problem: String? = nil, isAloneInControlGroup: Bool = false) {
            self.limits = limits
            self.problem = problem
            self.isAloneInControlGroup = isAloneInControlGroup
        }
    }

    /// Reads the limits now.
    package let read: @Sendable () -> Reading

    package init(read: @escaping @Sendable () -> Reading) {
        self.read = read
    }

    /// The process's own: its cgroup found afresh from `/proc/self` on each read (a process can be
    /// moved), whether it is alone there, and this machine's physical memory.
    package static let current = MemoryLimitsReader { MemoryLimits.readCurrent(checkingProcesses: true) }

    /// The limits of `discovery` on a machine of `physicalBytes`, and whether the process is alone
    /// in its cgroup, read afresh each time.
    package static func reading(_ discovery: ControlGroupDiscovery, physicalBytes: Int) -> MemoryLimitsReader {
        MemoryLimitsReader { MemoryLimits.read(discovery, physicalBytes: physicalBytes, checkingProcesses: true) }
    }
}

extension MemoryControlGroup {
    /// Whether the cgroup's `cgroup.procs` lists this process alone; false when it cannot be read.
    var holdsOnlyThisProcess: Bool {
        guard let text = try? KernelFile.read(directory.appending("cgroup.procs")) else { return false }
        return text.split(whereSeparator: \.isWhitespace) == ["\(getpid())"]
    }
}
