import SystemPackage
import MemoryPressureRuntime

/// A small kernel file kept open and re-read from its start (`pread` at offset 0) on each reading.
///
/// Opening a /proc or /sys file costs about 5 µs on these machines (the path walk and the file's
/// set-up); a `pread` of an open one costs about 1 µs. The kernel regenerates the text on every
/// read from offset 0, so each reading is fresh. The sampling path reads `/proc/self/statm`, PSI and
/// the cgroup's files this way, into a stack buffer, without allocating.
package final class OpenKernelFile: Sendable {
    /// The file's path, for errors.
    package let path: FilePath
    private let descriptor: FileDescriptor

    /// Opens `path` for reading.
    package init(_ path: FilePath) throws(MemoryPressureError) {
        self.path = path
        do {
            descriptor = try FileDescriptor.open(path, .readOnly, options: .closeOnExec)
        } catch {
            throw .kernelFile(path, opening: error)
        }
    }

    /// Opens `path` for reading; nil when the file is not there (a figure this kernel lacks).
    package static func ifPresent(_ path: FilePath) throws(MemoryPressureError) -> OpenKernelFile? {
        do {
            return try OpenKernelFile(path)
        } catch where error.code == .measurementUnavailable {
            return nil
        }
    }

    /// Reads the file's text (at most `capacity - 1` bytes) and parses it with `parse`. A file that
    /// fills the buffer, or text `parse` rejects, is reported as malformed with the file's text.
    package func parse<Value>(capacity: Int, _ parse: (UnsafeRawBufferPointer) -> Value?) throws(MemoryPressureError) -> Value {
        let parsed: Value?
        do {
            parsed = try withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) { buffer in
                let count = try descriptor.read(fromAbsoluteOffset: 0, into: buffer)
                return count < capacity ? parse(UnsafeRawBufferPointer(rebasing: buffer[..<count])) : nil
            }
        } catch {
            throw .kernelFileUnreadable(path, errno: error as? Errno ?? .ioError)
        }
        guard let parsed else {
            throw .kernelFileMalformed(path, text: (try? KernelFile.read(path)) ?? "")
        }
        return parsed
    }

    deinit {
        try? descriptor.close()
    }
}
