import Logging

/// Takes samples from a list of sources, cheap or full. A source that fails is logged once; one
/// whose file is missing is not read again, and its figures stay unknown (nil).
///
/// SPI, not API: the monitor owns its sampler. The Sampling suite prices a cheap and a full sample
/// on their own, which no public path isolates.
@_spi(Benchmarks) public struct MemorySampler: Sendable {
    private let sources: [any MemorySampleSource]
    /// The heap account whose bytes complete each sample, when a memory system keeps one.
    private let account: FootprintAccount?
    /// The process apps whose children's footprints each sample adds, when a memory system has them.
    private let processes: ProcessApps?
    private let logger: Logger
    /// Names of sources whose failure has been logged.
    private var reported: Set<String> = []
    /// Indices of sources not read any more because their file is missing.
    private var retired: Set<Int> = []
    /// Whether samples count what the cgroup's working set holds beyond the process's own figure
    /// (``MemorySample/controlGroupExcessBytes``).
    var judgesControlGroupWorkingSet = false
    /// That excess at the last full sample that read the working set; cheap samples carry it on.
    private var controlGroupExcess = 0

    /// A sampler over `sources`.
    @_spi(Benchmarks) public init(sources: [any MemorySampleSource], logger: Logger = Logger(label: "MemoryPressure.MemorySampler")) {
        self.init(sources: sources, account: nil, logger: logger)
    }

    /// A sampler over `sources` whose samples `account` completes with the heaps' bytes, and that
    /// adds the footprints of `processes`' children.
    init(sources: [any MemorySampleSource], account: FootprintAccount?, processes: ProcessApps? = nil, logger: Logger) {
        self.sources = sources
        self.account = account
        self.processes = processes
        self.logger = logger
    }

    /// Reads every source `depth` covers, timestamped `time`.
    @_spi(Benchmarks) public mutating func sample(_ depth: SampleDepth, at time: ContinuousClock.Instant = .now) -> MemorySample {
        var sample = MemorySample(time: time)
        let heaps = account?.snapshot()
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
        sample.processAppBytes = processes?.totalFootprintBytes()
        if let workingSet = sample.cgroupWorkingSetBytes, let own = sample.measuredResidentBytes {
            // The children's cgroups sit inside the process's: their memory is counted once.
            controlGroupExcess = max(0, workingSet - own - (sample.processAppBytes ?? 0))
        }
        if judgesControlGroupWorkingSet {
            sample.controlGroupExcessBytes = controlGroupExcess
        }
        if let account, let heaps {
            account.complete(&sample, from: heaps)
        }
        return sample
    }

    private mutating func report(_ name: String, _ error: any Error) {
        guard reported.insert(name).inserted else { return }
        logger.notice("memory figure unknown, \(name): \(error)")
    }
}
