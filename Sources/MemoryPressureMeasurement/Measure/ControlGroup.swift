import SystemPackage
import MemoryPressureRuntime

/// The process's own cgroup v2 directory, and the memory files the kernel keeps in it.
package struct ControlGroup: Hashable, Sendable {
    /// The cgroup's directory, for example `/sys/fs/cgroup/system.slice/app.service`.
    package let directory: FilePath

    /// The cgroup at `directory`.
    package init(directory: FilePath) {
        self.directory = directory
    }

    /// Finds the calling process's cgroup v2 directory from `/proc/self/cgroup` and the cgroup2
    /// mount in `/proc/self/mountinfo`. Throws when the process has no cgroup v2 membership or no
    /// cgroup2 file system is mounted.
    package static func current() throws(MemoryPressureError) -> ControlGroup {
        let membershipPath: FilePath = "/proc/self/cgroup"
        let mountsPath: FilePath = "/proc/self/mountinfo"
        let membership = try KernelFile.read(membershipPath)
        guard let relative = unifiedPath(inMembership: membership) else {
            throw .kernelFileMalformed(membershipPath, text: "no cgroup v2 (\"0::\") entry")
        }
        guard let mount = cgroup2Mount(inMountInfo: try KernelFile.read(mountsPath)) else {
            throw .kernelFileMalformed(mountsPath, text: "no cgroup2 file system mounted")
        }
        return ControlGroup(directory: directory(forRelativePath: relative, mountRoot: mount.root, mountPoint: mount.point))
    }

    /// `memory.current`: bytes the cgroup uses now, page cache included.
    package func currentBytes() throws(MemoryPressureError) -> Int {
        try KernelFile.parseBytes(path("memory.current"), capacity: Self.byteCountCapacity, Self.parseByteCount(_:))
    }

    /// Reads `memory.current` kept open (the sampling path).
    package static func currentBytes(from file: OpenKernelFile) throws(MemoryPressureError) -> Int {
        try file.parse(capacity: byteCountCapacity, parseByteCount(_:))
    }

    /// A number of bytes and a newline.
    private static let byteCountCapacity = 32

    /// `memory.stat`'s `inactive_file`, kept open (the sampling path): page cache the kernel
    /// reclaims first, which the working set leaves out.
    package static func inactiveFileBytes(from file: OpenKernelFile) throws(MemoryPressureError) -> Int {
        try file.parse(capacity: ControlGroupV1Statistics.fileCapacity) { text in
            KernelText.value(named: "inactive_file", in: text).flatMap { Int(exactly: $0) }
        }
    }

    private static func parseByteCount(_ text: UnsafeRawBufferPointer) -> Int? {
        KernelText.unsigned(KernelText.trimmed(text)).flatMap { Int(exactly: $0) }
    }

    /// `memory.max`: the hard limit, beyond which the kernel's OOM killer acts.
    package func maximum() throws(MemoryPressureError) -> CgroupLimit {
        try KernelFile.parse(path("memory.max"), CgroupLimit.init(parsing:))
    }

    /// `memory.high`: the throttling limit, beyond which the kernel reclaims aggressively.
    package func high() throws(MemoryPressureError) -> CgroupLimit {
        try KernelFile.parse(path("memory.high"), CgroupLimit.init(parsing:))
    }

    /// `memory.pressure`: the cgroup's own PSI file.
    package var memoryPressurePath: FilePath { path("memory.pressure") }

    package func path(_ file: String) -> FilePath {
        directory.appending(file)
    }

    /// The path after `0::` in a `/proc/self/cgroup` text.
    static func unifiedPath(inMembership text: String) -> String? {
        text.split(separator: "\n")
            .first { $0.hasPrefix("0::") }
            .map { String($0.dropFirst(3)) }
    }

    /// The root and mount point of the first cgroup2 file system in a `/proc/self/mountinfo` text.
    ///
    /// Each line reads `id parent major:minor root mountpoint options [optional…] - fstype source superoptions`.
    static func cgroup2Mount(inMountInfo text: String) -> (root: String, point: String)? {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let separator = fields.firstIndex(of: "-"),
                  separator + 1 < fields.count, fields[separator + 1] == "cgroup2",
                  fields.count > 4
            else { continue }
            return (unescapeMountPath(fields[3]), unescapeMountPath(fields[4]))
        }
        return nil
    }

    /// The directory of a cgroup whose path is `relative`, on a cgroup2 mount of `mountRoot` at `mountPoint`.
    package static func directory(forRelativePath relative: String, mountRoot: String, mountPoint: String) -> FilePath {
        var inside = relative
        if mountRoot != "/", inside == mountRoot || inside.hasPrefix(mountRoot + "/") {
            inside = String(inside.dropFirst(mountRoot.count))
        }
        var directory = FilePath(mountPoint)
        for component in inside.split(separator: "/") where !component.isEmpty {
            directory.append(String(component))
        }
        return directory
    }

    /// mountinfo escapes spaces, tabs, newlines and backslashes as three octal digits.
    package static func unescapeMountPath(_ field: Substring) -> String {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        var iterator = Array(field.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "\\"), iterator.count >= 3,
               let code = UInt8(String(decoding: iterator.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(code)
                iterator = iterator.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A cgroup memory limit: a number of bytes, or `max` for none.
package enum CgroupLimit: Hashable, Sendable, CustomStringConvertible {
    /// No limit is set (the file reads `max`).
    case unlimited
    /// The limit in bytes.
    case bytes(Int)

    /// Parses the text of `memory.max` or `memory.high`.
    package init?(parsing text: Substring) {
        if text == "max" {
            self = .unlimited
        } else if let bytes = Int(text), bytes >= 0 {
            self = .bytes(bytes)
        } else {
            return nil
        }
    }

    /// The limit in bytes, or nil when there is none.
    package var byteCount: Int? {
        if case .bytes(let count) = self { count } else { nil }
    }

    package var description: String {
        switch self {
        case .unlimited: "max"
        case .bytes(let count): String(count)
        }
    }
}
