import SystemPackage

/// Why a kernel event source could not be armed: what was tried on which file, and the errno.
struct KernelEventArmingError: Error, Hashable, CustomStringConvertible {
    /// What was tried, such as `write` or `open`.
    var action: String
    var path: FilePath
    var errno: Errno

    init(_ action: String, _ path: FilePath, errno: Int32) {
        self.action = action
        self.path = path
        self.errno = Errno(rawValue: errno)
    }

    /// `cannot write /sys/fs/cgroup/memory/app/cgroup.event_control: Permission denied`.
    var description: String { "cannot \(action) \(path): \(errno)" }
}
