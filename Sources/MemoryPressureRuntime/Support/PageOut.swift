#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

/// Pages this process's own memory out to swap with `madvise(MADV_PAGEOUT)` (Linux 5.4): with a
/// zram swap device, the pages are compressed and kept in memory until they are touched again, as
/// iOS's compressor does with a suspended app's dirty pages.
package enum PageOut {
    /// `MADV_PAGEOUT`.
    package static let advice: Int32 = 21

    /// Advises the kernel to page out the whole pages inside `range`. Returns the bytes advised (the
    /// range rounded in to whole pages); the kernel pages out those resident and not locked, and
    /// with no swap, none of the anonymous ones.
    ///
    /// - Throws: ``MemoryPressureError`` with ``MemoryPressureError/Code/measurementUnavailable``
    ///   when the kernel has no `MADV_PAGEOUT` (before 5.4), with the errno.
    package static func pageOut(_ range: UnsafeRawBufferPointer) throws(MemoryPressureError) -> Int {
        guard let base = range.baseAddress, range.count > 0 else { return 0 }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = (UInt(bitPattern: base) + UInt(pageSize - 1)) & ~UInt(pageSize - 1)
        let end = (UInt(bitPattern: base) + UInt(range.count)) & ~UInt(pageSize - 1)
        guard start < end, let address = UnsafeMutableRawPointer(bitPattern: start) else { return 0 }
        guard madvise(address, Int(end - start), advice) == 0 else {
            let failure = Errno(rawValue: errno)
            throw MemoryPressureError(
                .measurementUnavailable,
                "memory cannot be paged out: madvise(MADV_PAGEOUT) failed: \(failure); expected Linux 5.4 or later",
                errno: failure
            )
        }
        return Int(end - start)
    }
}
