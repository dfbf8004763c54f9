import Jemalloc
import Logging

/// Takes samples from a list of sources, cheap or full, and reads the registered arenas on full
/// samples. A source that fails is logged once; one whose file is missing is not read again, and
/// its figures stay unknown (nil).
public struct MemorySampler: Sendable {
    private let sources: [any MemorySampleSource]
    private let arenas: @Sendable () -> Set<Arena>
    private let arenaReader: Result<ArenaStatistics.Reader, JemallocError>
    private let logger: Logger
    /// Names of sources whose failure has been logged.
    private var reported: Set<String> = []
    /// Indices of sources not read any more because their file is missing.
    private var retired: Set<Int> = []

    /// A sampler over `sources`, reading the arenas `arenas` returns on full samples.
    public init(
        sources: [any MemorySampleSource] = MemorySampler.standardSources(),
        arenas: @escaping @Sendable () -> Set<Arena> = { [] },
        logger: Logger = Logger(label: "MemoryPressure.MemorySampler")
    ) {
        self.sources = sources
        self.arenas = arenas
        self.arenaReader = Result { () throws(JemallocError) in try ArenaStatistics.Reader() }
        self.logger = logger
    }

    /// The process's own: statm, jemalloc, its cgroup v2 and PSI.
    public static func standardSources() -> [any MemorySampleSource] {
        [ProcessMemorySampleSource(), JemallocSampleSource(), ControlGroupSampleSource(), PressureStallSampleSource()]
    }

    /// Reads every source `depth` covers, timestamped `time`.
    public mutating func sample(_ depth: SampleDepth, at time: ContinuousClock.Instant = .now) -> MemorySample {
        var sample = MemorySample(time: time)
        for (index, source) in sources.enumerated() where !retired.contains(index) {
            if depth == .cheap, source.depth == .full { continue }
            do {
                try source.read(into: &sample)
            } catch {
                report(source.name, error)
                if let error = error as? MemoryPressureError, error.code == .measurementUnavailable {
                    retired.insert(index)
                }
            }
        }
        if depth == .full {
            readArenas(into: &sample)
        }
        return sample
    }

    private mutating func readArenas(into sample: inout MemorySample) {
        let registered = arenas()
        guard !registered.isEmpty else { return }
        do {
            let reader = try arenaReader.get()
            for arena in registered {
                sample.arenaBytes[arena] = try reader.read(arena).allocated
            }
        } catch {
            report("arena statistics", error)
        }
    }

    private mutating func report(_ name: String, _ error: any Error) {
        guard reported.insert(name).inserted else { return }
        logger.notice("memory figure unknown, \(name): \(error)")
    }
}
