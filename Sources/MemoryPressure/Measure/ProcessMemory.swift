#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

/// The process's memory as the kernel counts it, from `/proc/self/statm`.
///
/// Reading it costs about a microsecond, so it is the cheap figure to sample often; jemalloc's
/// statistics say where the bytes are, this says how many the kernel charges the process for.
public struct ProcessMemory: Hashable, Sendable {
    /// Bytes of the process's pages that are resident in memory (RSS).
    public var residentBytes: Int
    /// Bytes of the process's virtual address space.
    public var virtualBytes: Int
    /// Bytes of resident pages that are file-backed or shared.
    public var sharedBytes: Int

    public init(residentBytes: Int, virtualBytes: Int, sharedBytes: Int) {
        self.residentBytes = residentBytes
        self.virtualBytes = virtualBytes
        self.sharedBytes = sharedBytes
    }

    /// The path read: `/proc/self/statm`.
    public static let statmPath: FilePath = "/proc/self/statm"

    /// Reads the calling process's figures now.
    public static func current() throws(MeasurementError) -> ProcessMemory {
        try KernelFile.parse(statmPath) { parse(statm: $0, pageSize: systemPageSize) }
    }

    /// Parses the text of a `statm` file: sizes in pages, `size resident shared text lib data dt`.
    static func parse(statm: Substring, pageSize: Int) -> ProcessMemory? {
        let fields = statm.split(separator: " ").prefix(3).compactMap { Int($0) }
        guard fields.count == 3, fields.allSatisfy({ $0 >= 0 }) else { return nil }
        return ProcessMemory(
            residentBytes: fields[1] * pageSize,
            virtualBytes: fields[0] * pageSize,
            sharedBytes: fields[2] * pageSize
        )
    }

    /// The kernel's page size, in which `statm` counts.
    static let systemPageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
}
