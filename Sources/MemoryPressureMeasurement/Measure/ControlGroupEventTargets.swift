import SystemPackage
import MemoryPressureRuntime

/// The cgroup files a pressure monitor waits on for the kernel's memory events, besides PSI: a v2
/// `memory.events` to watch for changes, and a v1 memory cgroup whose `memory.pressure_level`
/// notifications to register.
package enum ControlGroupEventTargets: Hashable, Sendable {
    /// The process's own memory cgroup, found when the monitor starts: its `memory.events` on v2,
    /// its `memory.pressure_level` on v1 and hybrid hosts.
    case processGroup
    /// These files; nil for a source not to arm.
    case given(memoryEvents: FilePath?, pressureLevelDirectory: FilePath?)

    /// Nothing: the monitor waits on PSI alone, where its trigger is armed.
    package static let none = given(memoryEvents: nil, pressureLevelDirectory: nil)

    /// A file to arm, or why there is none.
    package enum Target: Hashable, Sendable {
        case path(FilePath)
        /// Nothing to arm here, and why: not a failure, so nothing is logged.
        case off(reason: String)
    }

    /// The `memory.events` file and the v1 cgroup directory, each a path or the reason there is none.
    package func resolved() -> (memoryEvents: Target, pressureLevelDirectory: Target) {
        switch self {
        case .given(let memoryEvents, let pressureLevelDirectory):
            let notGiven = Target.off(reason: "not configured")
            return (memoryEvents.map(Target.path) ?? notGiven, pressureLevelDirectory.map(Target.path) ?? notGiven)
        case .processGroup:
            do throws(MemoryPressureError) {
                return Self.targets(of: try ControlGroupDiscovery.current())
            } catch {
                return (.off(reason: error.description), .off(reason: error.description))
            }
        }
    }

    /// The targets of the memory cgroup `discovery` found.
    package static func targets(of discovery: ControlGroupDiscovery) -> (memoryEvents: Target, pressureLevelDirectory: Target) {
        switch discovery.memory {
        case .v2(let group, _):
            return (.path(group.path("memory.events")), .off(reason: "cgroup v2 has no memory.pressure_level; PSI takes its place"))
        case .v1(let group):
            return (.off(reason: "the memory controller is on cgroup v1 (layout \(discovery.layout)), which has no memory.events"), .path(group.directory))
        case nil:
            let reason = "no memory cgroup: " + (discovery.reason ?? "none found")
            return (.off(reason: reason), .off(reason: reason))
        }
    }
}
