#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
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
        let parsed = try withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) { buffer throws(MemoryPressureError) in
            let count = try read(into: buffer)
            return count < capacity ? parse(UnsafeRawBufferPointer(rebasing: buffer[..<count])) : nil
        }
        guard let parsed else {
            throw .kernelFileMalformed(path, text: (try? KernelFile.read(path)) ?? "")
        }
        return parsed
    }

    /// Reads the file from its start into `buffer`, retrying a read an interrupt cut short; returns
    /// the bytes read.
    ///
    /// `pread` itself, not `FileDescriptor.read(fromAbsoluteOffset:into:)`: the sampling thread reads
    /// `/proc/self/statm` this way a hundred times a second under pressure, each time with cold
    /// caches after its wait, and every layer of code between it and the system call costs a cache
    /// miss or more there (BENCHMARKS.md, issue 41).
    private func read(into buffer: UnsafeMutableRawBufferPointer) throws(MemoryPressureError) -> Int {
        while true {
            let count = pread(descriptor.rawValue, buffer.baseAddress, buffer.count, 0)
            if count >= 0 { return count }
            guard errno == EINTR else { throw .kernelFileUnreadable(path, errno: Errno(rawValue: errno)) }
        }
    }

    deinit {
        try? descriptor.close()
    }
}
