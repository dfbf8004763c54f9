import Jemalloc
import Synchronization
import SystemPackage
import MemoryPressureRuntime

/// How much a sample reads.
public enum SampleDepth: Hashable, Sendable {
    /// Only what is cheap enough to read on every sample: `/proc/self/statm`.
    case cheap
    /// Everything: the allocator's statistics (with an epoch refresh at most every 10 s), the
    /// cgroup's files and PSI.
    case full
}

/// One place figures of a ``MemorySample`` come from: a kernel file or the allocator.
public protocol MemorySampleSource: Sendable {
    /// Names the source in log lines, for example `/proc/self/statm`.
    var name: String { get }
    /// The shallowest depth of sample that reads this source: `.cheap` sources are read on every
    /// sample, `.full` ones only on full samples. Read once, when the monitor is made.
    var depth: SampleDepth { get }
    /// Adds this source's figures to `sample`, or throws when they cannot be read now.
    ///
    /// The monitor logs a source's first failure once and leaves its figures unknown (nil); a
    /// source that throws ``/MemoryPressureRuntime/MemoryPressureError/Code/measurementUnavailable`` is not read again.
    /// Byte figures lie in 0 through 2^56 (more than any machine's memory): a source that sets one
    /// outside that range fails the same way, with ``/MemoryPressureRuntime/MemoryPressureError/Code/measurementFailed``,
    /// and its figures are unknown for that sample.
    ///
    /// - Parameter sample: The sample being taken; the source sets its own figures in it.
    /// - Throws: Any error, when the figures cannot be read now. A ``/MemoryPressureRuntime/MemoryPressureError`` with the
    ///   code ``/MemoryPressureRuntime/MemoryPressureError/Code/measurementUnavailable`` means they never will be. The
    ///   standard kernel-file sources throw ``/MemoryPressureRuntime/MemoryPressureError/Code/measurementFailed`` for a
    ///   file that cannot be read or parsed; the jemalloc source throws the Jemalloc module's
    ///   `JemallocError`.
    func read(into sample: inout MemorySample) throws
}

/// The process's resident bytes from `/proc/self/statm`: the cheap figure read on every sample,
/// through a descriptor kept open.
package struct ProcessMemorySampleSource: MemorySampleSource {
    private let statm: Result<OpenKernelFile, MemoryPressureError>
    /// The kernel's page size, read once: a global's every use checks that it was made.
    private let pageSize = ProcessMemory.systemPageSize

    /// Opens `/proc/self/statm`; when that fails, every read reports why.
    package init() {
        statm = Result { () throws(MemoryPressureError) in try OpenKernelFile(ProcessMemory.statmPath) }
    }

    package var name: String { ProcessMemory.statmPath.string }

    package var depth: SampleDepth { .cheap }

    package func read(into sample: inout MemorySample) throws {
        sample.residentBytes = try ProcessMemory.read(from: statm.get(), pageSize: pageSize).residentBytes
    }
}

/// jemalloc's process-wide statistics, read through cached MIBs, with the epoch refreshed on a
/// schedule of its own.
///
/// An epoch refresh costs about 12 µs plus 9 µs per arena made with `arenas.create` (the heaps'
/// pool and own arenas: at most 128, so at most about 1.2 ms), while reading the statistics as of
/// the last refresh costs well under a microsecond. No decision waits for these figures: footprints
/// come from statm and the heaps' exact counters. So the epoch is refreshed at most once per
/// ``refreshInterval`` (10 s), which bounds its cost at about 0.01 % of a core whatever the number
/// of apps, and every full sample carries the statistics as of the last refresh; a sample that
/// refreshed carries the refresh's duration (``MemorySample/allocatorRefreshDuration``). When statm
/// could not be read (the footprint then comes from jemalloc's resident bytes), every full sample
/// refreshes.
package struct JemallocSampleSource: MemorySampleSource {
    private let reader: Result<JemallocStatistics.Reader, JemallocError>
    /// The longest time between two epoch refreshes.
    package let refreshInterval: Duration
    private let lastRefresh = LastRefresh()

    /// When the epoch was last refreshed for a sample.
    private final class LastRefresh: Sendable {
        let time = LibraryLock<ContinuousClock.Instant?>(nil)
    }

    /// Resolves the statistics' MIBs once; when that fails (jemalloc built without statistics),
    /// every read reports why.
    package init(refreshInterval: Duration = .seconds(10)) {
        reader = Result { () throws(JemallocError) in try JemallocStatistics.Reader() }
        self.refreshInterval = refreshInterval
    }

    package var name: String { "jemalloc statistics" }

    package var depth: SampleDepth { .full }

    package func read(into sample: inout MemorySample) throws {
        let reader = try reader.get()
        if refreshIsDue(at: sample.time, statmRead: sample.residentBytes != nil) {
            let start = ContinuousClock.now
            try Jemalloc.advanceEpoch()
            sample.allocatorRefreshDuration = ContinuousClock.now - start
        }
        sample.jemalloc = try reader.read(advancingEpoch: false)
    }

    /// Whether the epoch is to be refreshed for a sample taken at `time`; notes the refresh.
    private func refreshIsDue(at time: ContinuousClock.Instant, statmRead: Bool) -> Bool {
        lastRefresh.time.withLock { last in
            if statmRead, let last, time >= last, time - last < refreshInterval { return false }
            last = time
            return true
        }
    }
}

/// The process's memory cgroup: on v2 `memory.current` and, where the cgroup has it,
/// `memory.events`; on v1 `memory.usage_in_bytes`. Kept open and re-read on each full sample.
package struct ControlGroupSampleSource: MemorySampleSource {
    /// Names the cgroup's version and directory in log lines.
    package let name: String
    private let files: Result<Files, MemoryPressureError>

    private enum Files: Sendable {
        case v2(current: OpenKernelFile, events: OpenKernelFile?, stat: OpenKernelFile?)
        case v1(usage: OpenKernelFile, stat: OpenKernelFile?)
    }

    /// The memory cgroup of the calling process, v2 or v1, found from `/proc/self/cgroup` and
    /// `/proc/self/mountinfo`; when there is none, every read reports why.
    package init() {
        do throws(MemoryPressureError) {
            let discovery = try ControlGroupDiscovery.current()
            switch discovery.memory {
            case .v2(let group, _): self.init(group: group)
            case .v1(let group): self.init(version1: group)
            case nil: self.init(name: "cgroup", files: .failure(.noMemoryControlGroup(reason: discovery.reason ?? "")))
            }
        } catch {
            self.init(name: "cgroup", files: .failure(error))
        }
    }

    /// The cgroup v2 at a known directory.
    package init(group: ControlGroup) {
        self.init(name: "cgroup \(group.directory)", files: Result { () throws(MemoryPressureError) in
            .v2(
                current: try OpenKernelFile(group.path("memory.current")),
                events: try OpenKernelFile.ifPresent(group.path("memory.events")),
                stat: try OpenKernelFile.ifPresent(group.path("memory.stat"))
            )
        })
    }

    /// The v1 memory cgroup at a known directory.
    package init(version1 group: ControlGroupV1) {
        self.init(name: "cgroup v1 \(group.directory)", files: Result { () throws(MemoryPressureError) in
            .v1(usage: try OpenKernelFile(group.path("memory.usage_in_bytes")), stat: try OpenKernelFile.ifPresent(group.path("memory.stat")))
        })
    }

    private init(name: String, files: Result<Files, MemoryPressureError>) {
        self.name = name
        self.files = files
    }

    package var depth: SampleDepth { .full }

    package func read(into sample: inout MemorySample) throws {
        switch try files.get() {
        case .v2(let current, let events, let stat):
            let usage = try ControlGroup.currentBytes(from: current)
            sample.cgroupCurrentBytes = usage
            if let events {
                sample.cgroupEvents = try ControlGroupEvents.read(from: events)
            }
            if let stat {
                sample.cgroupWorkingSetBytes = max(0, usage - (try ControlGroup.inactiveFileBytes(from: stat)))
            }
        case .v1(let usage, let stat):
            let usage = try ControlGroupV1.usageBytes(from: usage)
            sample.cgroupCurrentBytes = usage
            if let stat {
                sample.cgroupWorkingSetBytes = try ControlGroupV1Statistics.read(from: stat).workingSetBytes(usageBytes: usage)
            }
        }
    }
}

/// Memory pressure stall information: the cgroup's own `memory.pressure` where it has one, else
/// the system's `/proc/pressure/memory`, kept open and re-read on each full sample.
package struct PressureStallSampleSource: MemorySampleSource {
    /// The PSI file read.
    package let path: FilePath
    private let file: Result<OpenKernelFile, MemoryPressureError>

    /// Reads the PSI file of the calling process's cgroup, or the system's when the cgroup's is not
    /// there.
    package init() {
        self.init(path: Self.preferredPath())
    }

    /// Reads the PSI file at `path`; when it cannot be opened, every read reports why.
    package init(path: FilePath) {
        self.path = path
        file = Result { () throws(MemoryPressureError) in try OpenKernelFile(path) }
    }

    package var name: String { path.string }

    package var depth: SampleDepth { .full }

    package func read(into sample: inout MemorySample) throws {
        sample.pressureStall = try PressureStall.read(from: file.get())
    }

    /// The cgroup's `memory.pressure` when it can be read, else `/proc/pressure/memory`.
    package static func preferredPath() -> FilePath {
        if let group = try? ControlGroup.current(), (try? PressureStall.read(from: group.memoryPressurePath)) != nil {
            return group.memoryPressurePath
        }
        return PressureStall.systemPath
    }
}
