#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

/// A watch on the files that set a memory cgroup's limit (``MemoryControlGroup/limitFiles()``): the
/// kernel raises an inotify `IN_MODIFY` on a file at every successful `write(2)` to it, cgroup
/// files included, so a lowered limit wakes the monitor within microseconds of the write, however
/// busy the cgroup and before the kernel reclaims at the new limit. The `memory.pressure_level`
/// notifications (v1) and `memory.events` (v2) come only once the kernel acts on the limit; this
/// comes as it is set. Closed when the last reference goes away.
package final class ControlGroupLimitWatch {
    /// The inotify descriptor: readable while a write is pending.
    package let descriptor: Int32
    /// The files watched.
    package let paths: [FilePath]
    /// Each file's inotify watch descriptor.
    private let watches: [Int32: FilePath]

    /// Starts watching `paths` for writes, or throws why it cannot (no file given, or one that
    /// cannot be watched).
    package init(watching paths: [FilePath]) throws(KernelEventArmingError) {
        guard !paths.isEmpty else { throw KernelEventArmingError("watch", "memory limit files", errno: ENOENT) }
        (descriptor, watches) = try ControlGroupEventsWatch.inotifyWatches(paths)
        self.paths = paths
    }

    /// Reads the pending writes, after `poll` reported them: the files written, and false when the
    /// watch has ended (a file is gone, as when its cgroup is removed).
    package func drain() -> (written: Set<FilePath>, alive: Bool) {
        var written: Set<FilePath> = []
        let alive = ControlGroupEventsWatch.drain(descriptor) { watch in
            if let path = self.watches[watch] { written.insert(path) }
        }
        return (written, alive)
    }

    deinit {
        close(descriptor)
    }
}

/// When the files that set a cgroup's limit were last written, and the real-time clock they are
/// stamped by.
package enum ControlGroupLimitWrites {
    /// The latest modification time of `paths`, files the watch saw written, as time since the
    /// Unix epoch; nil when none can be read. The kernel stamps a cgroup file at each write with
    /// its coarse real-time clock (a few milliseconds' resolution): the time a limit was set, as
    /// best the process can tell. Only a written file's time says so: one never written reads as
    /// the time the kernel last made its inode, which can be later.
    package static func lastWrite(of paths: [FilePath]) -> Duration? {
        var latest: Duration?
        for path in paths {
            var status = stat()
            guard stat(path.string, &status) == 0 else { continue }
            let time = Duration.seconds(status.st_mtim.tv_sec) + .nanoseconds(status.st_mtim.tv_nsec)
            latest = max(latest ?? time, time)
        }
        return latest
    }

    /// The real-time clock now, as time since the Unix epoch: what a write's time is compared with.
    package static func realTimeNow() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }
}

extension MemoryControlGroup {
    /// The files whose writes set the cgroup's effective limit, from its directory up to the top
    /// of the hierarchy the process sees, those present only: `memory.max` and `memory.high` on
    /// v2 (up to the mount point), `memory.limit_in_bytes` on v1 (up to the first directory
    /// without one: the hierarchy's root, or a container's view of it).
    package func limitFiles() -> [FilePath] {
        let (names, top): ([String], FilePath?) = switch self {
        case .v2(_, let mountPoint): (["memory.max", "memory.high"], mountPoint)
        case .v1: (["memory.limit_in_bytes"], nil)
        }
        var files: [FilePath] = []
        var directory = self.directory
        while true {
            let present = names.map { directory.appending($0) }.filter { access($0.string, F_OK) == 0 }
            if present.isEmpty, top == nil { break }
            files += present
            if let top, directory == top || !directory.starts(with: top) { break }
            guard directory.removeLastComponent(), !directory.isEmpty, directory != "/" else { break }
        }
        return files
    }
}
