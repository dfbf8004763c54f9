#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinuxEvents
import SystemPackage

/// cgroup v1's `memory.pressure_level` notifications, the mechanism Android's lmkd used before PSI:
/// one eventfd per level, registered by writing `<eventfd> <fd of memory.pressure_level> <level>`
/// to the cgroup's `cgroup.event_control`. The kernel signals a level's eventfd when reclaim in the
/// cgroup reaches that level or a higher one, and drops the registration when the eventfd is
/// closed (when the last reference goes away).
package final class ControlGroupPressureLevelWatch {
    /// The levels the kernel reports, from the mildest.
    package enum Level: Int, CaseIterable, Comparable {
        /// The cgroup reclaims memory for new allocations: maintenance, nothing more.
        case low
        /// Reclaim is heavy: swapping, page cache thrown out.
        case medium
        /// The cgroup is about to run out of memory, or its OOM killer about to act.
        case critical

        package static func < (lhs: Level, rhs: Level) -> Bool {
            lhs.rawValue < rhs.rawValue
        }

        /// The level's name in `cgroup.event_control`.
        package var name: String {
            switch self {
            case .low: "low"
            case .medium: "medium"
            case .critical: "critical"
            }
        }

        /// The level it raises the monitor to, the way PSI stall does: `medium` is a warning and
        /// `critical` critical; `low` only wakes the monitor.
        package var pressureLevel: PressureLevel {
            switch self {
            case .low: .normal
            case .medium: .warning
            case .critical: .critical
            }
        }
    }

    /// The cgroup directory registered on.
    package let directory: FilePath
    /// Each level's eventfd, from the mildest.
    package let descriptors: [(level: Level, descriptor: Int32)]

    /// The levels registered, as stats and logs name them.
    package static let levelNames = Level.allCases.map(\.name).joined(separator: ", ")

    /// Registers an eventfd for each level on the cgroup v1 memory cgroup at `directory`, or throws
    /// why it cannot: no `memory.pressure_level`, or `cgroup.event_control` not writable by this
    /// process (a read-only cgroup mount, as in most containers, or another user's cgroup).
    package init(directory: FilePath) throws(KernelEventArmingError) {
        let levelPath = directory.appending("memory.pressure_level")
        let controlPath = directory.appending("cgroup.event_control")
        let levelFile = open(levelPath.string, O_RDONLY | O_CLOEXEC)
        guard levelFile >= 0 else { throw KernelEventArmingError("open", levelPath, errno: errno) }
        defer { close(levelFile) }
        let control = open(controlPath.string, O_WRONLY | O_CLOEXEC)
        guard control >= 0 else { throw KernelEventArmingError("write", controlPath, errno: errno) }
        defer { close(control) }

        var descriptors: [(level: Level, descriptor: Int32)] = []
        for level in Level.allCases {
            let descriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
            guard descriptor >= 0 else {
                let failure = KernelEventArmingError("make an eventfd for", levelPath, errno: errno)
                for (_, descriptor) in descriptors { close(descriptor) }
                throw failure
            }
            descriptors.append((level, descriptor))
            let registration = Array("\(descriptor) \(levelFile) \(level.name)\n".utf8)
            let written = registration.withUnsafeBytes { write(control, $0.baseAddress, $0.count) }
            guard written == registration.count else {
                let failure = KernelEventArmingError("write", controlPath, errno: written < 0 ? errno : EIO)
                for (_, descriptor) in descriptors { close(descriptor) }
                throw failure
            }
        }
        self.directory = directory
        self.descriptors = descriptors
    }

    /// Reads and resets the eventfds among `ready` (those `poll` reported readable) and returns the
    /// highest level signalled, or nil when none of them is this watch's or none was signalled.
    package func takeLevel(ready: some Sequence<Int32>) -> Level? {
        var highest: Level?
        for descriptor in ready {
            guard let level = descriptors.first(where: { $0.descriptor == descriptor })?.level else { continue }
            var count: UInt64 = 0
            if read(descriptor, &count, MemoryLayout<UInt64>.size) == MemoryLayout<UInt64>.size, count > 0 {
                highest = max(highest ?? level, level)
            }
        }
        return highest
    }

    deinit {
        for (_, descriptor) in descriptors { close(descriptor) }
    }
}
