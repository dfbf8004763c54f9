#if canImport(Glibc)
import Glibc
#endif

/// The size of a page.
public let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

/// Writes one byte in every page, so every page is resident.
public func touchEveryPage(_ bytes: UnsafeMutableRawBufferPointer) {
    for offset in stride(from: 0, to: bytes.count, by: pageSize) {
        bytes[offset] = 1
    }
}

/// Nanoseconds `work` takes.
public func nanoseconds(_ work: () throws -> Void) rethrows -> Int {
    let elapsed = try ContinuousClock().measure(work)
    return Int(elapsed / .nanoseconds(1))
}

/// The kernel's own reclaim time: the floor no allocator or manager can beat.
public enum KernelReclaim {
    /// Nanoseconds `madvise(MADV_DONTNEED)` takes to drop `byteCount` bytes of touched anonymous
    /// memory (mapped and touched before the clock starts).
    public static func nanosecondsToReclaim(byteCount: Int) throws(SystemCallError) -> Int {
        guard let region = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              region != MAP_FAILED
        else { throw SystemCallError(name: "mmap", errno: errno) }
        defer { munmap(region, byteCount) }
        touchEveryPage(UnsafeMutableRawBufferPointer(start: region, count: byteCount))
        var status: Int32 = 0
        let elapsed = nanoseconds { status = madvise(region, byteCount, MADV_DONTNEED) }
        guard status == 0 else { throw SystemCallError(name: "madvise", errno: errno) }
        return elapsed
    }
}

/// A system call that failed.
public struct SystemCallError: Error {
    public let name: String
    public let errno: Int32

    public init(name: String, errno: Int32) {
        self.name = name
        self.errno = errno
    }
}
