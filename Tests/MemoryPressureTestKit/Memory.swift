#if canImport(Glibc)
import Glibc
#endif
import Jemalloc
import MemoryPressure

/// 1 MiB.
public let mebibyte = 1 << 20

/// The size of a page.
public let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

/// Writes one byte in every page of `bytes`, so that every page is resident.
public func touchEveryPage(_ bytes: UnsafeMutableRawBufferPointer) {
    for offset in stride(from: 0, to: bytes.count, by: pageSize) {
        bytes[offset] = 1
    }
}

/// Buffers of 1 MiB in `heap` adding up to `totalBytes`, each page written so that it is resident.
public func residentBuffers(in heap: AppHeap, totalBytes: Int) throws -> [HeapBuffer] {
    try (0..<(totalBytes / mebibyte)).map { _ in
        let buffer = try heap.allocate(byteCount: mebibyte)
        buffer.withUnsafeMutableBytes(touchEveryPage)
        return buffer
    }
}

/// How many bytes of the pages under `regions` (each an address and a byte count) are resident now, by `mincore(2)`: the pages of
/// these buffers alone, whatever else the process allocates or frees meanwhile. A page no longer
/// mapped is not resident.
public func residentBytes(of regions: [(address: Int, count: Int)]) -> Int {
    regions.reduce(0) { total, region in
        let first = region.address & ~(pageSize - 1)
        let end = (region.address + region.count + pageSize - 1) & ~(pageSize - 1)
        var resident = 0
        var page = [UInt8](repeating: 0, count: 1)
        // One page at a time: `mincore` fails for a whole range with ENOMEM when part is unmapped.
        for address in stride(from: first, to: end, by: pageSize)
        where mincore(UnsafeMutableRawPointer(bitPattern: address), pageSize, &page) == 0 && page[0] & 1 != 0 {
            resident += pageSize
        }
        return total + resident
    }
}

/// The process's resident bytes now, from `/proc/self/statm` (opened, read and closed).
public func residentBytes() throws -> Int {
    try ProcessMemory.current().residentBytes
}

/// The process's resident bytes, after returning jemalloc's dirty pages so that they do not count.
public func settledResidentBytes() throws -> Int {
    try Jemalloc.purgeAllArenas()
    return try residentBytes()
}

/// The kernel's own reclaim time: the floor no allocator or manager can beat.
public enum KernelReclaim {
    /// The time `madvise(MADV_DONTNEED)` takes to drop `bytes` of touched anonymous memory (mapped
    /// and touched before the clock starts).
    public static func timeToReclaim(bytes: Int) throws(SystemCallError) -> Duration {
        guard let region = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              region != MAP_FAILED
        else { throw SystemCallError(name: "mmap", errno: errno) }
        defer { munmap(region, bytes) }
        touchEveryPage(UnsafeMutableRawBufferPointer(start: region, count: bytes))
        var status: Int32 = 0
        let elapsed = ContinuousClock().measure { status = madvise(region, bytes, MADV_DONTNEED) }
        guard status == 0 else { throw SystemCallError(name: "madvise", errno: errno) }
        return elapsed
    }
}

/// A system call that failed, and its errno.
public struct SystemCallError: Error, CustomStringConvertible {
    public let name: String
    public let errno: Int32

    public var description: String {
        "\(name) failed: \(String(cString: strerror(errno)))"
    }
}
