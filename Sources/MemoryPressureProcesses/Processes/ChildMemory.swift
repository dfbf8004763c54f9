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

    package init(bytes: Int, mechanism: ChildMemoryMechanism) {
        self.bytes = bytes
        self.mechanism = mechanism
    }
}

/// The files a child's footprint is read from, opened once at spawn and re-read from offset 0 into
/// a stack buffer on each reading (no allocation per sample; see ``/MemoryPressureMeasurement/OpenKernelFile``).
final class ChildMemoryReader: Sendable {
    private enum Files {
        /// The child's own cgroup v2: memory.current and memory.stat.
        case version2(current: OpenKernelFile, stat: OpenKernelFile)
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
    /// The last correction: PSS less RSS, and when it was measured.
    private let correction = LibraryLock<(measured: ContinuousClock.Instant, bytes: Int)?>(nil)

    package init(pid: Int32, memoryGroup: ChildControlGroupParents.Parent?, correctionInterval: Duration) throws(MemoryPressureError) {
        self.pid = pid
        statm = try OpenKernelFile(FilePath("/proc/\(pid)/statm"))
        self.correctionInterval = correctionInterval
        if let memoryGroup, memoryGroup.isVersion2 {
            files = .version2(
                current: try OpenKernelFile(memoryGroup.directory.appending("memory.current")),
                stat: try OpenKernelFile(memoryGroup.directory.appending("memory.stat"))
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
        case .version2(let current, let stat):
            let usage = try ControlGroup.currentBytes(from: current)
            let inactive = try ControlGroup.inactiveFileBytes(from: stat)
            return ChildFootprint(bytes: max(0, usage - inactive), mechanism: mechanism)
        case .version1(let usage, let stat):
            let bytes = try ControlGroupV1.usageBytes(from: usage)
            let statistics = try ControlGroupV1Statistics.read(from: stat)
            return ChildFootprint(bytes: statistics.workingSetBytes(usageBytes: bytes), mechanism: mechanism)
        case .residentSet(let rollup):
            let resident = try residentSetBytes()
            let descendants = ProcessTree.descendantsResidentBytes(of: pid)
            guard let rollup else { return ChildFootprint(bytes: resident + descendants, mechanism: mechanism) }
            let now = ContinuousClock.now
            var correction = self.correction.withLock { $0 }
            if correction.map({ now - $0.measured >= correctionInterval }) ?? true {
                // About 730 µs: read outside the lock, at most once per interval.
                let proportional = try Self.proportionalSetBytes(from: rollup)
                let fresh = (measured: now, bytes: proportional - resident)
                self.correction.withLock { $0 = fresh }
                correction = fresh
            }
            return ChildFootprint(bytes: max(0, resident + (correction?.bytes ?? 0)) + descendants, mechanism: mechanism)
        }
    }

    /// The resident set from `/proc/PID/statm`, whatever the footprint's mechanism.
    func residentSetBytes() throws(MemoryPressureError) -> Int {
        try ProcessMemory.read(from: statm).residentBytes
    }

    /// The PSS from an open `/proc/PID/smaps_rollup`: its `Pss:` line, in kB.
    static func proportionalSetBytes(from rollup: OpenKernelFile) throws(MemoryPressureError) -> Int {
        try rollup.parse(capacity: 4096) { proportionalSetBytes(inRollup: $0) }
    }

    /// The `Pss:` figure of a `smaps_rollup` text, in bytes; nil when there is none.
    static func proportionalSetBytes(inRollup text: some Collection<UInt8>) -> Int? {
        var found: Int?
        _ = KernelText.allLines(of: text) { line in
            var kilobytes: Int?
            var isPSS = false
            var index = 0
            _ = KernelText.allFields(of: line) { field in
                defer { index += 1 }
                if index == 0 {
                    isPSS = KernelText.matches(field, "Pss:")
                    return isPSS
                }
                if index == 1 { kilobytes = KernelText.unsigned(field).flatMap { Int(exactly: $0) } }
                return false
            }
            guard isPSS, let kilobytes else { return true }
            found = kilobytes * 1024
            return false
        }
        return found
    }
}
