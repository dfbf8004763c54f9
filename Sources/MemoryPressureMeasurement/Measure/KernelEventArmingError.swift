import SystemPackage

/// Why a kernel event source could not be armed: what was tried on which file, and the errno.
package struct KernelEventArmingError: Error, Hashable, CustomStringConvertible {
    /// What was tried, such as `write` or `open`.
    package var action: String
    package var path: FilePath
    package var errno: Errno

    package init(_ action: String, _ path: FilePath, errno: Int32) {
        self.action = action
        self.path = path
        self.errno = Errno(rawValue: errno)
    }

    /// `cannot write /sys/fs/cgroup/memory/app/cgroup.event_control: Permission denied`.
    package var description: String { "cannot \(action) \(path): \(errno)" }
}
