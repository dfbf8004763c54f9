#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage
import MemoryPressureRuntime

/// The process's memory as the kernel counts it, from `/proc/self/statm`.
///
/// Reading it costs about a microsecond, so it is the cheap figure to sample often; jemalloc's
/// statistics say where the bytes are, this says how many the kernel charges the process for.
///
/// Codable as an object: `residentBytes`, `virtualBytes` and `sharedBytes`.
package struct ProcessMemory: Hashable, Sendable, Codable {
    /// Bytes of the process's pages that are resident in memory (RSS).
    package var residentBytes: Int
    /// Bytes of the process's virtual address space.
    package var virtualBytes: Int
    /// Bytes of resident pages that are file-backed or shared.
    package var sharedBytes: Int

    /// Figures in bytes.
    package init(residentBytes: Int, virtualBytes: Int, sharedBytes: Int) {
        self.residentBytes = residentBytes
        self.virtualBytes = virtualBytes
        self.sharedBytes = sharedBytes
    }

    /// The path read: `/proc/self/statm`.
    package static let statmPath: FilePath = "/proc/self/statm"

    /// Reads the calling process's figures now.
    package static func current() throws(MemoryPressureError) -> ProcessMemory {
        try KernelFile.parseBytes(statmPath, capacity: statmCapacity) { parse(statm: $0, pageSize: systemPageSize) }
    }

    /// Reads the figures of process `pid` now, opening its `statm` for this one reading.
    package static func read(pid: Int32) throws(MemoryPressureError) -> ProcessMemory {
        try KernelFile.parseBytes(FilePath("/proc/\(pid)/statm"), capacity: statmCapacity) { parse(statm: $0, pageSize: systemPageSize) }
    }

    /// Reads the figures from `/proc/self/statm` kept open (the cheap path), in pages of `pageSize`
    /// bytes.
    package static func read(from statm: OpenKernelFile, pageSize: Int = systemPageSize) throws(MemoryPressureError) -> ProcessMemory {
        try statm.parse(capacity: statmCapacity) { parse(statm: $0, pageSize: pageSize) }
    }

    /// Seven numbers of at most 20 digits and their separators.
    private static let statmCapacity = 160

    /// Parses the text of a `statm` file: sizes in pages, `size resident shared text lib data dt`.
    package static func parse(statm: some Collection<UInt8>, pageSize: Int) -> ProcessMemory? {
        var fields = (size: 0, resident: 0, shared: 0)
        var index = 0
        var digits = 0
        var value = 0
        for byte in statm {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
                guard !overflow1, !overflow2 else { return nil }
                value = sum
                digits += 1
            case UInt8(ascii: " "), UInt8(ascii: "\n"):
                guard digits > 0 else { return nil }
                switch index {
                case 0: fields.size = value
                case 1: fields.resident = value
                default: fields.shared = value
                }
                index += 1
                digits = 0
                value = 0
                if index == 3 { return ProcessMemory(pageCounts: fields, pageSize: pageSize) }
            default:
                return nil
            }
        }
        return nil
    }

    private init(pageCounts: (size: Int, resident: Int, shared: Int), pageSize: Int) {
        self.init(
            residentBytes: pageCounts.resident * pageSize,
            virtualBytes: pageCounts.size * pageSize,
            sharedBytes: pageCounts.shared * pageSize
        )
    }

    /// The kernel's page size, in which `statm` counts.
    package static let systemPageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
}
