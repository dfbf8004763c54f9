#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CProcessSpawn
import SystemPackage
import MemoryPressureRuntime
import MemoryPressureMeasurement

/// Pages a process's private anonymous memory out to swap with `process_madvise(MADV_PAGEOUT)`
/// (Linux 5.10) on its pidfd, as Android's app compaction does to a cached app: with a zram swap
/// device, the pages are compressed and kept in memory, and come back when the process touches
/// them. The process need not run: a frozen one is paged out as well.
///
/// It takes `CAP_SYS_NICE` and the right to read the process's memory (`PTRACE_MODE_READ`: the
/// same user, or root). Without swap the kernel takes nothing and says nothing: the caller checks
/// ``/MemoryPressureMeasurement/SwapSpace`` first.
package enum ProcessPageOut {
    /// Ranges per call: under `IOV_MAX` (1,024).
    private static let rangesPerCall = 512

    /// Advises the kernel to page out every private anonymous mapping of the process `pid`, which
    /// `pidfd` names. Returns the bytes advised: what the process had mapped there, of which the
    /// kernel pages out what is resident and not locked. A process that has ended is paged out of
    /// nothing.
    ///
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with
    ///   ``/MemoryPressureRuntime/MemoryPressureError/Code/measurementUnavailable`` when the kernel has
    ///   no `process_madvise` or refuses it here (no permission), with the errno.
    package static func pageOut(pid: Int32, pidfd: Int32) throws(MemoryPressureError) -> Int {
        let mappings: AnonymousMappings
        do {
            mappings = try AnonymousMappings.read(pid: pid)
        } catch where error.code == .measurementUnavailable {
            return 0  // Its /proc entry is gone: it has ended.
        }
        var advised = 0
        var start = 0
        while start < mappings.ranges.count {
            let batch = mappings.ranges[start..<min(start + rangesPerCall, mappings.ranges.count)]
            advised = advised.addingClamped(try advise(batch, pidfd: pidfd))
            start = batch.endIndex
        }
        return advised
    }

    /// Advises `ranges` in one call; where one of them is gone since the maps were read (`ENOMEM`),
    /// one at a time, passing over those that are gone.
    private static func advise(_ ranges: ArraySlice<AnonymousMappings.Range>, pidfd: Int32) throws(MemoryPressureError) -> Int {
        var vectors = ranges.map { iovec(iov_base: UnsafeMutableRawPointer(bitPattern: $0.start), iov_len: $0.length) }
        let result = mp_process_madvise(pidfd, &vectors, vectors.count, PageOut.advice)
        if result >= 0 { return result }
        switch Errno(rawValue: Int32(-result)) {
        case .noSuchProcess:
            return 0
        case .noMemory where vectors.count > 1:
            var advised = 0
            for index in vectors.indices {
                let one = mp_process_madvise(pidfd, &vectors[index], 1, PageOut.advice)
                if one >= 0 { advised = advised.addingClamped(one) }
            }
            return advised
        case .noMemory:
            return 0
        case let errno:
            throw .pageOutUnavailable(errno)
        }
    }
}

extension MemoryPressureError {
    /// `process_madvise` failed with `errno` (`ENOSYS`: before Linux 5.10; `EPERM`: no
    /// `CAP_SYS_NICE`; `EINVAL`: no `MADV_PAGEOUT`).
    static func pageOutUnavailable(_ errno: Errno) -> Self {
        Self(
            .measurementUnavailable,
            "a process's memory cannot be paged out: process_madvise(MADV_PAGEOUT) failed: \(errno); expected Linux 5.10 or later and CAP_SYS_NICE",
            errno: errno
        )
    }
}
