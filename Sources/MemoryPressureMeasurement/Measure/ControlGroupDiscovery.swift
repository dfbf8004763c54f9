import SystemPackage
import MemoryPressureRuntime

/// How the process's cgroups are laid out: which version holds its memory controller, if any.
package enum ControlGroupLayout: String, Hashable, Sendable, Codable, CustomStringConvertible {
    /// cgroup v2 alone, with the memory controller enabled for the process's cgroup.
    case v2
    /// cgroup v1 alone: the memory controller on a v1 hierarchy, no cgroup2 mount.
    case v1
    /// The memory controller on a v1 hierarchy, beside a cgroup2 tree without it (systemd's hybrid mode).
    case hybrid
    /// No memory controller for the process.
    case none

    package var description: String { rawValue }
}

/// The cgroup that holds the process's memory controller.
package enum MemoryControlGroup: Hashable, Sendable {
    /// A cgroup v2 directory whose `cgroup.controllers` lists `memory`, with the mount point it
    /// sits under (the top of the walk for inherited limits).
    case v2(ControlGroup, mountPoint: FilePath)
    /// A directory of the v1 `memory` hierarchy.
    case v1(ControlGroupV1)

    /// The cgroup's directory.
    package var directory: FilePath {
        switch self {
        case .v2(let group, _): group.directory
        case .v1(let group): group.directory
        }
    }
}

/// Where the process's memory controller is, found from `/proc/self/cgroup` and `/proc/self/mountinfo`.
package struct ControlGroupDiscovery: Hashable, Sendable {
    /// The layout found.
    package var layout: ControlGroupLayout
    /// The cgroup holding the memory controller, or nil when there is none (see ``reason``).
    package var memory: MemoryControlGroup?
    /// The process's cgroup2 directory, with or without the memory controller, where there is one.
    package var unifiedDirectory: FilePath?
    /// Why there is no memory controller, when there is none.
    package var reason: String?

    package static let membershipPath: FilePath = "/proc/self/cgroup"
    package static let mountInfoPath: FilePath = "/proc/self/mountinfo"

    /// Discovers the calling process's layout from the real `/proc/self` files.
    package static func current() throws(MemoryPressureError) -> ControlGroupDiscovery {
        let membership = try KernelFile.read(membershipPath)
        let mountInfo = try KernelFile.read(mountInfoPath)
        return discover(membership: membership, mountInfo: mountInfo)
    }

    /// Discovers the layout from the texts of `/proc/self/cgroup` and `/proc/self/mountinfo`.
    ///
    /// A cgroup2 directory is a memory cgroup only when its `cgroup.controllers` lists `memory`;
    /// the v1 `memory` hierarchy is the `cgroup` mount whose super options name `memory`. Paths in
    /// the membership are taken relative to each mount's root, so nested mounts (root not `/`) work.
    package static func discover(membership: String, mountInfo: String) -> ControlGroupDiscovery {
        var unifiedPath: String?
        var memoryPath: String?
        for line in membership.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            if fields[0] == "0", fields[1].isEmpty {
                unifiedPath = String(fields[2])
            } else if fields[1].split(separator: ",").contains("memory") {
                memoryPath = String(fields[2])
            }
        }
        let mounts = CgroupMounts(mountInfo: mountInfo)

        var unified: FilePath?
        var unifiedHasMemory = false
        var unifiedMountPoint: FilePath?
        if let unifiedPath, let mount = mounts.unified {
            let directory = ControlGroup.directory(forRelativePath: unifiedPath, mountRoot: mount.root, mountPoint: mount.point)
            unified = directory
            unifiedMountPoint = FilePath(mount.point)
            unifiedHasMemory = Self.listsMemory(directory.appending("cgroup.controllers"))
        }
        var v1: ControlGroupV1?
        if let memoryPath, let mount = mounts.memory {
            v1 = ControlGroupV1(directory: ControlGroup.directory(forRelativePath: memoryPath, mountRoot: mount.root, mountPoint: mount.point))
        }

        if let unified, unifiedHasMemory, let unifiedMountPoint {
            return ControlGroupDiscovery(layout: .v2, memory: .v2(ControlGroup(directory: unified), mountPoint: unifiedMountPoint), unifiedDirectory: unified)
        }
        if let v1 {
            return ControlGroupDiscovery(layout: unified == nil ? .v1 : .hybrid, memory: .v1(v1), unifiedDirectory: unified)
        }
        let reason: String
        if let unified {
            reason = "\(unified.appending("cgroup.controllers")) does not list memory, and there is no v1 memory hierarchy"
        } else if memoryPath != nil {
            reason = "\(membershipPath) names a v1 memory cgroup, but \(mountInfoPath) has no cgroup mount with the memory controller"
        } else if unifiedPath != nil {
            reason = "\(membershipPath) names a cgroup v2, but \(mountInfoPath) has no cgroup2 mount"
        } else {
            reason = "\(membershipPath) names no memory cgroup"
        }
        return ControlGroupDiscovery(layout: .none, memory: nil, unifiedDirectory: unified, reason: reason)
    }

    /// Whether a `cgroup.controllers` file lists `memory`; a missing or unreadable file does not.
    private static func listsMemory(_ path: FilePath) -> Bool {
        guard let text = try? KernelFile.read(path) else { return false }
        return text.split(whereSeparator: \.isWhitespace).contains("memory")
    }
}

/// The cgroup mounts of a `/proc/self/mountinfo` text: the first cgroup2 and the v1 `memory` hierarchy.
struct CgroupMounts {
    package var unified: (root: String, point: String)?
    package var memory: (root: String, point: String)?

    /// Each line reads `id parent major:minor root mountpoint options [optional…] - fstype source superoptions`.
    package init(mountInfo text: String) {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let separator = fields.firstIndex(of: "-"), separator + 1 < fields.count, fields.count > 4 else { continue }
            let type = fields[separator + 1]
            let mount = (root: ControlGroup.unescapeMountPath(fields[3]), point: ControlGroup.unescapeMountPath(fields[4]))
            if type == "cgroup2", unified == nil {
                unified = mount
            } else if type == "cgroup", memory == nil, separator + 3 < fields.count,
                      fields[separator + 3].split(separator: ",").contains("memory") {
                memory = mount
            }
        }
    }
}
