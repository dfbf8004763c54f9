import SystemPackage

/// A directory of the cgroup v1 `memory` hierarchy, and the memory files the kernel keeps in it.
package struct ControlGroupV1: Hashable, Sendable {
    /// The cgroup's directory, for example `/sys/fs/cgroup/memory/system.slice/app.service`.
    package let directory: FilePath

    /// The cgroup at `directory`.
    package init(directory: FilePath) {
        self.directory = directory
    }
}
