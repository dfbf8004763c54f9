/// How much a sample reads.
public enum SampleDepth: Hashable, Sendable {
    /// Only what is cheap enough to read on every sample: `/proc/self/statm`.
    case cheap
    /// Everything: a jemalloc epoch refresh, the allocator's and the arenas' statistics, the
    /// cgroup's files and PSI.
    case full
}

/// One place figures of a ``MemorySample`` come from: a kernel file or the allocator.
public protocol MemorySampleSource: Sendable {
    /// Names the source in log lines, for example `/proc/self/statm`.
    var name: String { get }
    /// The shallowest depth of sample that reads this source: `.cheap` sources are read on every
    /// sample, `.full` ones only on full samples.
    var depth: SampleDepth { get }
    /// Adds this source's figures to `sample`, or throws when they cannot be read now. A
    /// ``MemoryPressureError`` with the code ``MemoryPressureError/Code/measurementUnavailable`` means
    /// they never will be.
    func read(into sample: inout MemorySample) throws
}
