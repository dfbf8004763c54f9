#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

/// A watch on a cgroup v2 `memory.events` file. The kernel raises a file-modified event on it
/// whenever one of its counters (`low`, `high`, `max`, `oom`, `oom_kill`) changes; inotify turns
/// that into a descriptor that `poll` reports readable. Closed when the last reference goes away.
///
/// inotify rather than `POLLPRI` on the file itself: the kernel signals both, but only inotify
/// also works on an ordinary file, such as the fake cgroup trees of the tests.
package final class ControlGroupEventsWatch {
    /// The inotify descriptor: readable while a change is pending.
    package let descriptor: Int32
    /// The `memory.events` file watched.
    package let path: FilePath

    /// Starts watching `path` for changes, or throws why it cannot.
    package init(watching path: FilePath) throws(KernelEventArmingError) {
        descriptor = try Self.inotifyDescriptor(watching: [path])
        self.path = path
    }

    /// A new inotify descriptor (non-blocking, closed on exec) watching each of `paths`, none
    /// empty, for writes (`IN_MODIFY`); throws why one cannot be watched.
    static func inotifyDescriptor(watching paths: [FilePath]) throws(KernelEventArmingError) -> Int32 {
        try inotifyWatches(paths).descriptor
    }

    /// A new inotify descriptor watching each of `paths` for writes, with each path's watch
    /// descriptor (which its events name).
    static func inotifyWatches(_ paths: [FilePath]) throws(KernelEventArmingError) -> (descriptor: Int32, watches: [Int32: FilePath]) {
        var watches: [Int32: FilePath] = [:]
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw KernelEventArmingError("make an inotify descriptor for", paths.first ?? "", errno: errno) }
        for path in paths {
            let watch = inotify_add_watch(descriptor, path.string, UInt32(IN_MODIFY))
            guard watch >= 0 else {
                let failure = KernelEventArmingError("watch", path, errno: errno)
                close(descriptor)
                throw failure
            }
            watches[watch] = path
        }
        return (descriptor, watches)
    }

    /// Reads the pending events, after `poll` reported them. False when the watch has ended: the
    /// file is gone, as when its cgroup is removed.
    package func drain() -> Bool {
        Self.drain(descriptor)
    }

    /// Reads every pending event of the inotify descriptor `descriptor`; false when one of its
    /// watches has ended (`IN_IGNORED`: the file is gone).
    static func drain(_ descriptor: Int32, written: ((Int32) -> Void)? = nil) -> Bool {
        var ended = false
        let eventSize = MemoryLayout<inotify_event>.size
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: MemoryLayout<inotify_event>.alignment) { buffer in
            while true {
                let count = read(descriptor, buffer.baseAddress, buffer.count)
                guard count > 0 else { return }
                var offset = 0
                while offset + eventSize <= count {
                    let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                    if event.mask & UInt32(IN_IGNORED) != 0 { ended = true }
                    if event.mask & UInt32(IN_MODIFY) != 0 { written?(event.wd) }
                    offset += eventSize + Int(event.len)
                }
            }
        }
        return !ended
    }

    deinit {
        close(descriptor)
    }
}
