import Jemalloc

/// jemalloc's process-wide statistics, after an epoch refresh, read through cached MIBs.
public struct JemallocSampleSource: MemorySampleSource {
    private let reader: Result<JemallocStatistics.Reader, JemallocError>

    /// Resolves the statistics' MIBs once; when that fails (jemalloc built without statistics),
    /// every read reports why.
    public init() {
        reader = Result { () throws(JemallocError) in try JemallocStatistics.Reader() }
    }

    public var name: String { "jemalloc statistics" }

    public var depth: SampleDepth { .full }

    public func read(into sample: inout MemorySample) throws {
        sample.jemalloc = try reader.get().read(advancingEpoch: true)
    }
}
