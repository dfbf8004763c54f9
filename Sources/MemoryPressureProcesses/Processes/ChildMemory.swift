import Synchronization
import SystemPackage
import MemoryPressureRuntime
import MemoryPressureMeasurement

/// A child process's footprint and how it was measured.
package struct ChildFootprint: Hashable, Sendable {
    /// Bytes charged to the child: its cgroup's working set, or its resident set corrected by PSS
    /// and its descendants' resident sets.
    package var bytes: Int
    /// How ``bytes`` was measured.
    package var mechanism: ChildMemoryMechanism
    /// Bytes of the child's memory in swap (paged out by compression, or by the kernel): its
    /// cgroup's swap (v2 `memory.swap.current`, v1 `total_swap`), or its `smaps_rollup`'s `Swap:`;
    /// not in ``bytes``.
    package var swappedBytes: Int

    package init(bytes: Int, mechanism: ChildMemoryMechanism, swappedBytes: Int = 0) {
        self.bytes = bytes
        self.mechanism = mechanism
        self.swappedBytes = swappedBytes
    }
}

/// The files a child's footprint is read from, opened once at spawn and re-read from offset 0 into
/// a stack buffer on each reading (no allocation per sample; see ``/MemoryPressureMeasurement/OpenKernelFile``).
final class ChildMemoryReader: Sendable {
    private enum Files {
        /// The child's own cgroup v2: memory.current, memory.stat, and memory.swap.current where
        /// the kernel accounts swap.
        case version2(current: OpenKernelFile, stat: OpenKernelFile, swap: OpenKernelFile?)
        /// The child's own v1 memory cgroup: memory.usage_in_bytes and memory.stat.
        case version1(usage: OpenKernelFile, stat: OpenKernelFile)
        /// No cgroup of its own: statm, and smaps_rollup for the PSS correction; its descendants'
        /// resident sets are added (``ProcessTree``).
        case residentSet(rollup: OpenKernelFile?)
    }

    /// How the footprint is measured.
    let mechanism: ChildMemoryMechanism
    /// The child, whose descendants count with it where it has no cgroup of its own.
    private let pid: Int32
    private let files: Files
    /// `/proc/PID/statm`, kept open: the resident set, read on every sample where there is no cgroup.
    private let statm: OpenKernelFile
    /// How often PSS corrects the resident set.
    private let correctionInterval: Duration
    /// The last correction: PSS less RSS, the bytes in swap, and when they were measured.
    private let correction = LibraryLock<(measured: ContinuousClock.Instant, bytes: Int, swapped: Int)?>(nil)

    package init(pid: Int32, memoryGroup: ChildControlGroupParents.Parent?, correctionInterval: Duration) throws(MemoryPressureError) {
        self.pid = pid
        statm = try OpenKernelFile(FilePath("/proc/\(pid)/statm"))
        self.correctionInterval = correctionInterval
        if let memoryGroup, memoryGroup.isVersion2 {
            files = .version2(
                current: try OpenKernelFile(memoryGroup.directory.appending("memory.current")),
                stat: try OpenKernelFile(memoryGroup.directory.appending("memory.stat")),
                swap: try OpenKernelFile.ifPresent(memoryGroup.directory.appending("memory.swap.current"))
            )
            mechanism = .controlGroupV2
        } else if let memoryGroup {
            files = .version1(
                usage: try OpenKernelFile(memoryGroup.directory.appending("memory.usage_in_bytes")),
                stat: try OpenKernelFile(memoryGroup.directory.appending("memory.stat"))
            )
            mechanism = .controlGroupV1
        } else {
            files = .residentSet(rollup: try OpenKernelFile.ifPresent(FilePath("/proc/\(pid)/smaps_rollup")))
            mechanism = .residentSet
        }
    }

    /// The footprint now.
    package func footprint() throws(MemoryPressureError) -> ChildFootprint {
        switch files {
        case .version2(let current, let stat, let swap):
            let usage = try ControlGroup.currentBytes(from: current)
            let inactive = try ControlGroup.inactiveFileBytes(from: stat)
            let swapped = try swap.map { file throws(MemoryPressureError) in try ControlGroup.currentBytes(from: file) } ?? 0
            return ChildFootprint(bytes: max(0, usage - inactive), mechanism: mechanism, swappedBytes: swapped)
        case .version1(let usage, let stat):
            let bytes = try ControlGroupV1.usageBytes(from: usage)
            let statistics = try ControlGroupV1Statistics.read(from: stat)
            return ChildFootprint(
                bytes: statistics.workingSetBytes(usageBytes: bytes), mechanism: mechanism, swappedBytes: statistics.totalSwapBytes
            )
        case .residentSet(let rollup):
            let resident = try residentSetBytes()
            let descendants = ProcessTree.descendantsResidentBytes(of: pid)
            guard let rollup else { return ChildFootprint(bytes: resident + descendants, mechanism: mechanism) }
            let now = ContinuousClock.now
            var correction = self.correction.withLock { $0 }
            if correction.map({ now - $0.measured >= correctionInterval }) ?? true {
                // About 730 µs: read outside the lock, at most once per interval.
                let figures = try Self.rollupFigures(from: rollup)
                let fresh = (measured: now, bytes: figures.proportional - resident, swapped: figures.swapped)
                self.correction.withLock { $0 = fresh }
                correction = fresh
            }
            return ChildFootprint(
                bytes: max(0, resident + (correction?.bytes ?? 0)) + descendants, mechanism: mechanism,
                swappedBytes: correction?.swapped ?? 0
            )
        }
    }

    /// The resident set from `/proc/PID/statm`, whatever the footprint's mechanism.
    func residentSetBytes() throws(MemoryPressureError) -> Int {
        try ProcessMemory.read(from: statm).residentBytes
    }

    /// The PSS and the bytes in swap from an open `/proc/PID/smaps_rollup`: its `Pss:` and `Swap:`
    /// lines, in kB (no `Swap:` line: none in swap).
    static func rollupFigures(from rollup: OpenKernelFile) throws(MemoryPressureError) -> (proportional: Int, swapped: Int) {
        try rollup.parse(capacity: 4096) { text in
            proportionalSetBytes(inRollup: text).map { ($0, kibibytes(named: "Swap:", inRollup: text) ?? 0) }
        }
    }

    /// The `Pss:` figure of a `smaps_rollup` text, in bytes; nil when there is none.
    static func proportionalSetBytes(inRollup text: some Collection<UInt8>) -> Int? {
        kibibytes(named: "Pss:", inRollup: text)
    }

    /// The figure of the line `name` of a `smaps_rollup` text, in bytes; nil when there is none.
    private static func kibibytes(named name: StaticString, inRollup text: some Collection<UInt8>) -> Int? {
        var found: Int?
        _ = KernelText.allLines(of: text) { line in
            var kilobytes: Int?
            var isNamed = false
            var index = 0
            _ = KernelText.allFields(of: line) { field in
                defer { index += 1 }
                if index == 0 {
                    isNamed = KernelText.matches(field, name)
                    return isNamed
                }
                if index == 1 { kilobytes = KernelText.unsigned(field).flatMap { Int(exactly: $0) } }
                return false
            }
            guard isNamed, let kilobytes else { return true }
            found = kilobytes * 1024
            return false
        }
        return found
    }
}
