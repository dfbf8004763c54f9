import Logging
import MemoryPressureRuntime
import MemoryPressureMeasurement

/// Takes samples from a list of sources, cheap or full. A source that fails is logged once; one
/// whose file is missing is not read again, and its figures stay unknown (nil).
///
/// Thread-safe: the monitor's thread and those who measure between its ticks (the ladder, an
/// admission) read through one sampler at once. The sources (a service's own among them) are read
/// with no lock held, so a slow one holds up only the reading that waits for it; the sampler's lock
/// guards its bookkeeping alone.
///
/// SPI, not API: the monitor owns its sampler. The Sampling suite prices a cheap and a full sample
/// on their own, which no public path isolates.
@_spi(Benchmarks) public final class MemorySampler: Sendable {
    private struct Bookkeeping {
        /// Names of sources whose failure has been logged.
        var reported: Set<String> = []
        /// Per source, in order, whether it is not read any more because its file is missing.
        var retired: [Bool]
        /// Whether samples count what the cgroup's working set holds beyond the process's own
        /// figure (``/MemoryPressureMeasurement/MemorySample/controlGroupExcessBytes``).
        var judgesControlGroupWorkingSet = false
        /// That excess at the last full sample that read the working set; cheap samples carry it on.
        var controlGroupExcess = 0
    }

    private let sources: [any MemorySampleSource]
    /// The indices of the sources a cheap sample reads, in order: their ``MemorySampleSource/depth``
    /// as the sampler was made.
    private let cheapSources: [Int]
    /// The indices of every source, in order: what a full sample reads.
    private let allSources: [Int]
    /// The heap account whose bytes complete each sample, when a memory system keeps one.
    private let account: FootprintAccount?
    /// What each sample adds beyond its sources and the heaps (the process apps' children), when a memory system has it.
    private let processes: (any FootprintContributor)?
    private let logger: Logger
    private let bookkeeping: LibraryLock<Bookkeeping>

    /// A sampler over `sources`.
    @_spi(Benchmarks) public convenience init(sources: [any MemorySampleSource], logger: Logger = Logger(label: "MemoryPressure.MemorySampler")) {
        self.init(sources: sources, account: nil, logger: logger)
    }

    /// A sampler over `sources` whose samples `account` completes with the heaps' bytes, and that
    /// adds the footprints of `processes`' children.
    package init(sources: [any MemorySampleSource], account: FootprintAccount?, processes: (any FootprintContributor)? = nil, logger: Logger) {
        self.sources = sources
        cheapSources = sources.indices.filter { sources[$0].depth == .cheap }
        allSources = Array(sources.indices)
        bookkeeping = LibraryLock(Bookkeeping(retired: Array(repeating: false, count: sources.count)))
        self.account = account
        self.processes = processes
        self.logger = logger
    }

    /// Whether samples count what the cgroup's working set holds beyond the process's own figure.
    var judgesControlGroupWorkingSet: Bool {
        get { bookkeeping.withLock { $0.judgesControlGroupWorkingSet } }
        set { bookkeeping.withLock { $0.judgesControlGroupWorkingSet = newValue } }
    }

    /// Reads every source `depth` covers, timestamped `time`.
    @_spi(Benchmarks) public func sample(_ depth: SampleDepth, at time: ContinuousClock.Instant = .now) -> MemorySample {
        sample(depth, at: Moment(time), contributions: .changing)
    }

    /// Reads every source `depth` covers, timestamped `moment`, and what `contributions` says of
    /// the process apps' children.
    package func sample(_ depth: SampleDepth, at moment: Moment, contributions: ContributionReading = .changing) -> MemorySample {
        var sample = MemorySample(moment: moment)
        let heaps = account?.snapshot()
        let (retired, judges, excess) = bookkeeping.withLock { ($0.retired, $0.judgesControlGroupWorkingSet, $0.controlGroupExcess) }
        var failures: [(index: Int, name: String, error: any Error)] = []
        for index in depth == .cheap ? cheapSources : allSources where !retired[index] {
            let source = sources[index]
            callOut {
                let unread = sample
                do {
                    try source.read(into: &sample)
                    if let (figure, bytes) = sample.figureOutOfRange {
                        // The figures of a source (a custom one) outside any machine's memory are
                        // unknown: `Int.max` resident bytes overflowed the heaps' admission (a trap
                        // on the allocating thread), and `Int.min` the sample's own sums.
                        sample = unread
                        throw MemoryPressureError.sampleFigureOutOfRange(
                            source: source.name, figure: figure, bytes: bytes, maximum: MemorySample.mostBytes
                        )
                    }
                } catch {
                    failures.append((index, source.name, error))
                }
            }
        }
        sample.processAppBytes = processes?.totalFootprintBytes(reading: contributions)
        // The working set's excess over the process's own figure, when this sample read it: the
        // children's cgroups sit inside the process's, so their memory is counted once.
        let newExcess = sample.cgroupWorkingSetBytes.flatMap { workingSet in
            sample.measuredResidentBytes.map { max(0, workingSet - $0 - (sample.processAppBytes ?? 0)) }
        }
        if judges {
            sample.controlGroupExcessBytes = newExcess ?? excess
        }
        if !failures.isEmpty || newExcess != nil {
            record(failures, excess: newExcess)
        }
        if let account, let heaps {
            account.complete(&sample, from: heaps)
        }
        return sample
    }

    /// Notes a sample's failed sources and the working set's excess it read: retires the sources
    /// whose file is missing and logs each source's first failure, with no lock held.
    private func record(_ failures: [(index: Int, name: String, error: any Error)], excess: Int?) {
        let firstFailures = bookkeeping.withLock { bookkeeping in
            var first: [(name: String, error: any Error)] = []
            for failure in failures {
                if bookkeeping.reported.insert(failure.name).inserted { first.append((failure.name, failure.error)) }
                if let error = failure.error as? MemoryPressureError, error.code == .measurementUnavailable {
                    bookkeeping.retired[failure.index] = true
                }
            }
            if let excess {
                bookkeeping.controlGroupExcess = excess
            }
            return first
        }
        for (name, error) in firstFailures {
            logger.notice("memory figure unknown, \(name): \(error)")
        }
    }
}

extension MemorySample {
    /// The most bytes a figure of a sample may give, 2^56 (64 PiB): more than any machine's memory,
    /// and small enough that the sums of figures the monitor and the heaps' admission make never
    /// overflow.
    package static let mostBytes = 1 << 56

    /// The first byte figure a source may set that lies outside 0 through ``mostBytes``, with its
    /// name; nil when every one is unknown or in range.
    var figureOutOfRange: (figure: String, bytes: Int)? {
        func outside(_ bytes: Int?) -> Bool { bytes.map { !(0...Self.mostBytes).contains($0) } ?? false }
        if outside(residentBytes) { return ("residentBytes", residentBytes!) }
        if outside(cgroupCurrentBytes) { return ("cgroupCurrentBytes", cgroupCurrentBytes!) }
        if outside(cgroupWorkingSetBytes) { return ("cgroupWorkingSetBytes", cgroupWorkingSetBytes!) }
        if outside(jemalloc?.resident) { return ("jemalloc.resident", jemalloc!.resident) }
        if outside(heapBytes) { return ("heapBytes", heapBytes!) }
        if outside(processAppBytes) { return ("processAppBytes", processAppBytes!) }
        if outside(controlGroupExcessBytes) { return ("controlGroupExcessBytes", controlGroupExcessBytes) }
        return nil
    }
}
