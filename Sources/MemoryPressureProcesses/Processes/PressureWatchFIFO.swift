#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import SystemPackage
import MemoryPressureRuntime

/// systemd's memory-pressure protocol for one child: a FIFO that the child's
/// `MEMORY_PRESSURE_WATCH` names, and that the system writes a byte to on each memory warning.
///
/// systemd's `MEMORY_PRESSURE.md`: a watcher given a FIFO opens it for reading and takes `POLLIN`
/// as memory pressure, reading and discarding what it finds. That is what sd-event's
/// `sd_event_add_memory_pressure` and GLib's `GMemoryMonitor` do, so such programs release memory
/// on a warning with no code of ours.
///
/// The system holds the FIFO open for reading and writing (Linux allows it on a FIFO), so that
/// opening it never blocks, a child that has not opened it yet loses nothing, and a child that
/// closes it does not make writes fail. Writes never block: a full FIFO already holds a pending
/// warning. The FIFO is removed when this object goes.
package final class PressureWatchFIFO: Sendable {
    /// The variable that names the FIFO in the child's environment.
    package static let environmentName = "MEMORY_PRESSURE_WATCH"
    /// The FIFO's path.
    package let path: FilePath
    private let descriptor: Int32

    /// Makes a FIFO for `identifier` in a private directory of the system's temporary directory.
    package init(for identifier: AppIdentifier) throws(MemoryPressureError) {
        let directory = FilePath(Self.temporaryDirectory).appending("mempressure-\(getpid())")
        if mkdir(directory.string, 0o700) != 0, errno != EEXIST {
            throw .processCouldNotStart(identifier.rawValue, step: "making the directory of its MEMORY_PRESSURE_WATCH FIFO", errno: Errno(rawValue: errno))
        }
        // Numbered, not named after the app: an identifier may fill a file name on its own.
        let path = directory.appending("watch-\(Self.counter.wrappingAdd(1, ordering: .relaxed).newValue).fifo")
        guard mkfifo(path.string, 0o600) == 0 else {
            throw .processCouldNotStart(identifier.rawValue, step: "making its MEMORY_PRESSURE_WATCH FIFO", errno: Errno(rawValue: errno))
        }
        let descriptor = open(path.string, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let failure = Errno(rawValue: errno)
            unlink(path.string)
            throw .processCouldNotStart(identifier.rawValue, step: "opening its MEMORY_PRESSURE_WATCH FIFO", errno: failure)
        }
        self.path = path
        self.descriptor = descriptor
    }

    /// Signals a memory warning: one byte, unless one is already pending unread.
    package func signal() {
        var byte: UInt8 = 1
        _ = write(descriptor, &byte, 1)
    }

    deinit {
        close(descriptor)
        unlink(path.string)
    }

    private static var temporaryDirectory: String {
        guard let value = getenv("TMPDIR"), value.pointee != 0 else { return "/tmp" }
        return String(cString: value)
    }

    private static let counter = Atomic<Int>(0)
}
