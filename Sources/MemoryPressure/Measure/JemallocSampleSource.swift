import Jemalloc

/// jemalloc's process-wide statistics, after an epoch refresh, read through cached MIBs.
package struct JemallocSampleSource: MemorySampleSource {
    private let reader: Result<JemallocStatistics.Reader, JemallocError>

    /// Resolves the statistics' MIBs once; when that fails (jemalloc built without statistics),
    /// every read reports why.
    package init() {
        reader = Result { () throws(JemallocError) in try JemallocStatistics.Reader() }
    }

    package var name: String { "jemalloc statistics" }

    package var depth: SampleDepth { .full }

    package func read(into sample: inout MemorySample) throws {
        sample.jemalloc = try reader.get().read(advancingEpoch: true)
    }
}
