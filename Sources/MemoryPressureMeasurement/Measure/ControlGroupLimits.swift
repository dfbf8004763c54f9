import SystemPackage
import MemoryPressureRuntime

/// A cgroup limit and the file it was read from.
package struct ControlGroupLimitSource: Hashable, Sendable, CustomStringConvertible {
    /// The file, for example `/sys/fs/cgroup/app.slice/memory.max`.
    package var path: FilePath
    /// The figure's name: `memory.max`, `memory.high` or `hierarchical_memory_limit`.
    package var name: String

    package init(path: FilePath, name: String) {
        self.path = path
        self.name = name
    }

    /// The path, and the figure's name when the file holds several.
    package var description: String {
        path.lastComponent?.string == name ? path.string : "\(path) (\(name))"
    }
}

/// A limit in bytes and the file it was read from.
package struct SourcedLimit: Hashable, Sendable {
    package var bytes: Int
    package var source: ControlGroupLimitSource

    package init(bytes: Int, source: ControlGroupLimitSource) {
        self.bytes = bytes
        self.source = source
    }
}

/// The smallest limits on the path from the process's memory cgroup to the root.
package struct EffectiveControlGroupLimits: Hashable, Sendable {
    /// The smallest hard limit (`memory.max` on v2, `hierarchical_memory_limit` on v1) and where it is set.
    package var maximum: SourcedLimit?
    /// The smallest `memory.high` on v2 and where it is set; v1 has none.
    package var high: SourcedLimit?

    package init(maximum: SourcedLimit? = nil, high: SourcedLimit? = nil) {
        self.maximum = maximum
        self.high = high
    }
}

extension MemoryControlGroup {
    /// The effective limits: on v2, the smallest `memory.max` and `memory.high` from the cgroup up
    /// to the mount's root (a directory without the files, like the root cgroup, sets none); on
    /// v1, `memory.stat`'s `hierarchical_memory_limit`, which the kernel computes the same way.
    ///
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` when a limit file on the path cannot be read or parsed.
    package func effectiveLimits() throws(MemoryPressureError) -> EffectiveControlGroupLimits {
        switch self {
        case .v1(let group):
            var limits = EffectiveControlGroupLimits()
            if let bytes = try group.statistics().hierarchicalLimit.byteCount {
                limits.maximum = SourcedLimit(bytes: bytes, source: ControlGroupLimitSource(path: group.path("memory.stat"), name: "hierarchical_memory_limit"))
            }
            return limits
        case .v2(let group, let mountPoint):
            var limits = EffectiveControlGroupLimits()
            var directory = group.directory
            while true {
                let level = ControlGroup(directory: directory)
                if let bytes = try Self.optionalLimit(level.maximum), bytes < limits.maximum?.bytes ?? .max {
                    limits.maximum = SourcedLimit(bytes: bytes, source: ControlGroupLimitSource(path: level.path("memory.max"), name: "memory.max"))
                }
                if let bytes = try Self.optionalLimit(level.high), bytes < limits.high?.bytes ?? .max {
                    limits.high = SourcedLimit(bytes: bytes, source: ControlGroupLimitSource(path: level.path("memory.high"), name: "memory.high"))
                }
                guard directory != mountPoint, directory.starts(with: mountPoint), directory.removeLastComponent() else { break }
            }
            return limits
        }
    }

    /// A limit's bytes; nil when it is `max` or the file is not there.
    private static func optionalLimit(_ read: () throws(MemoryPressureError) -> CgroupLimit) throws(MemoryPressureError) -> Int? {
        do {
            return try read().byteCount
        } catch where error.code == .measurementUnavailable {
            return nil
        }
    }
}
