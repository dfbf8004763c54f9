import SystemPackage
import MemoryPressureRuntime

/// The cgroup files a pressure monitor waits on for the kernel's memory events, besides PSI: a v2
/// `memory.events` to watch for changes, a v1 memory cgroup whose `memory.pressure_level`
/// notifications to register, and the files that set the cgroup's limit, watched for writes.
package enum ControlGroupEventTargets: Hashable, Sendable {
    /// The process's own memory cgroup, found when the monitor starts: its `memory.events` on v2,
    /// its `memory.pressure_level` on v1 and hybrid hosts, and its limit files
    /// (``MemoryControlGroup/limitFiles()``) on both.
    case processGroup
    /// These files; nil (or no limit file) for a source not to arm.
    case given(memoryEvents: FilePath?, pressureLevelDirectory: FilePath?, limitFiles: [FilePath] = [])

    /// Nothing: the monitor waits on PSI alone, where its trigger is armed.
    package static let none = given(memoryEvents: nil, pressureLevelDirectory: nil)

    /// A file to arm, or why there is none.
    package enum Target: Hashable, Sendable {
        case path(FilePath)
        /// Several files, watched together.
        case paths([FilePath])
        /// Nothing to arm here, and why: not a failure, so nothing is logged.
        case off(reason: String)
    }

    /// The files of each source.
    package typealias Resolved = (memoryEvents: Target, pressureLevelDirectory: Target, limitFiles: Target)

    /// The `memory.events` file, the v1 cgroup directory and the limit files, each a path (paths)
    /// or the reason there is none.
    package func resolved() -> Resolved {
        switch self {
        case .given(let memoryEvents, let pressureLevelDirectory, let limitFiles):
            let notGiven = Target.off(reason: "not configured")
            return (
                memoryEvents.map(Target.path) ?? notGiven, pressureLevelDirectory.map(Target.path) ?? notGiven,
                limitFiles.isEmpty ? notGiven : .paths(limitFiles)
            )
        case .processGroup:
            do throws(MemoryPressureError) {
                return Self.targets(of: try ControlGroupDiscovery.current())
            } catch {
                return (.off(reason: error.description), .off(reason: error.description), .off(reason: error.description))
            }
        }
    }

    /// The targets of the memory cgroup `discovery` found.
    package static func targets(of discovery: ControlGroupDiscovery) -> Resolved {
        guard let group = discovery.memory else {
            let reason = "no memory cgroup: " + (discovery.reason ?? "none found")
            return (.off(reason: reason), .off(reason: reason), .off(reason: reason))
        }
        let files = group.limitFiles()
        let limitFiles = files.isEmpty ? Target.off(reason: "no limit file found in \(group.directory) or above it") : .paths(files)
        switch group {
        case .v2(let group, _):
            return (.path(group.path("memory.events")), .off(reason: "cgroup v2 has no memory.pressure_level; PSI takes its place"), limitFiles)
        case .v1(let group):
            return (
                .off(reason: "the memory controller is on cgroup v1 (layout \(discovery.layout)), which has no memory.events"),
                .path(group.directory), limitFiles
            )
        }
    }
}
