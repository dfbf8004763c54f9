import SystemPackage
import MemoryPressureMeasurement

/// One kernel event source a pressure monitor waits on besides its tick, and whether it is armed.
package struct KernelEventSourceStatus: Hashable, Sendable, CustomStringConvertible {
    /// The sources, in the order the monitor arms them.
    package enum Kind: Hashable, Sendable, CaseIterable {
        /// A PSI trigger on the cgroup's `memory.pressure` or `/proc/pressure/memory`.
        case pressureStallTrigger
        /// A watch on the cgroup v2 `memory.events`.
        case memoryEvents
        /// cgroup v1 `memory.pressure_level` notifications.
        case pressureLevel
        /// A watch for writes to the files that set the cgroup's limit (v1 and v2).
        case limitFiles

        /// The source as logs and `mempressure stats` name it.
        package var name: String {
            switch self {
            case .pressureStallTrigger: "PSI trigger"
            case .memoryEvents: "memory.events watch"
            case .pressureLevel: "memory.pressure_level"
            case .limitFiles: "limit file watch"
            }
        }
    }

    /// Whether the source is armed.
    package enum State: String, Hashable, Sendable {
        /// The monitor wakes on it.
        case armed
        /// Turned off, or not applicable to this host's layout: nothing to report.
        case off
        /// Tried and refused (by the kernel, or for want of rights): logged once, and the monitor
        /// goes on without it.
        case refused = "not armed"
    }

    package var kind: Kind
    package var state: State
    /// The file armed or tried, when there is one.
    package var path: FilePath?
    /// What is armed (the trigger, the levels), or why nothing is.
    package var detail: String

    package init(_ kind: Kind, _ state: State, path: FilePath? = nil, detail: String) {
        self.kind = kind
        self.state = state
        self.path = path
        self.detail = detail
    }

    /// `PSI trigger armed on /proc/pressure/memory: some 200000 2000000`.
    package var description: String {
        "\(kind.name) \(state.rawValue)\(path.map { " on \($0)" } ?? ""): \(detail)"
    }
}

extension KernelEventSourceStatus {
    /// The sources a monitor arms on this host with `trigger` and `targets` (by default, a
    /// monitor's defaults), each armed and closed again at once.
    package static func probe(
        trigger: StallTrigger? = .standard,
        targets: ControlGroupEventTargets = .processGroup
    ) -> [KernelEventSourceStatus] {
        KernelEventWatches(trigger: trigger, targets: targets).statuses
    }
}
