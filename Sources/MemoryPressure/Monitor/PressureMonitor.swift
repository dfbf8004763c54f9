import Synchronization
import SystemPackage

/// Samples the process's memory on its own thread, judges it against a budget, and announces the
/// pressure level.
///
/// ```swift
/// let monitor = PressureMonitor(configuration: .init(budget: try .resolve(.automatic())))
/// try monitor.start()
/// for await event in monitor.events.stream() {
///     if case .change(let change) = event { print(change) }
/// }
/// ```
///
/// Every interval the monitor reads `/proc/self/statm` (the cheap path) and, as often as the
/// configuration asks, refreshes jemalloc's epoch and reads everything else. Where the kernel allows
/// it arms a PSI trigger and samples at once when it fires. Observers are called on the monitor's
/// thread, one event at a time; they should return quickly.
public final class PressureMonitor: Sendable {
    /// How the monitor samples and judges.
    public let configuration: Configuration
    /// Every sample with the level it was judged at, and every announcement of the level. Observers
    /// are called on the monitor's thread; streams end when the monitor stops.
    public let events = EventSource<PressureEvent>()
    /// The one sampler, shared by the sampling thread and by those who measure between its ticks.
    private let sampler: Mutex<MemorySampler>
    private let latest = Mutex<(level: PressureLevel, sample: MemorySample?)>((.normal, nil))
    private let thread = Mutex<SamplingThread?>(nil)

    /// A monitor that does nothing until ``start()``.
    package init(configuration: Configuration) {
        self.configuration = configuration
        sampler = Mutex(MemorySampler(sources: configuration.sources, logger: configuration.logger))
    }

    /// Starts sampling on a thread of its own; the first sample is taken at once. Does nothing when
    /// already running.
    ///
    /// - Throws: When the configured interval is not positive, or the thread cannot be made.
    package func start() throws(MemoryPressureError) {
        guard configuration.interval > .zero else {
            throw .monitorIntervalNotPositive(configuration.interval)
        }
        try thread.withLock { (running: inout SamplingThread?) throws(MemoryPressureError) in
            guard running == nil else { return }
            do throws(Errno) {
                let control = try SamplingControl()
                running = try SamplingThread(running: SamplingLoop(monitor: self, control: control), control: control)
            } catch {
                throw .monitorCouldNotStart(error)
            }
        }
    }

    /// Stops sampling, waits for the thread to end (its descriptors are closed with it), and ends
    /// every stream of ``events``. The monitor can be started again.
    package func stop() {
        let running = thread.withLock { $0.take() }
        running?.stop()
        events.finishStreams()
    }

    /// Whether the monitor is sampling.
    package var isRunning: Bool {
        thread.withLock { $0 != nil }
    }

    /// The level last announced.
    public var level: PressureLevel { latest.withLock { $0.level } }

    /// The most recent sample, or nil before the first.
    public var latestSample: MemorySample? { latest.withLock { $0.sample } }

    /// Asks the sampling thread for a full sample now rather than at the next interval. Returns at
    /// once; the sample is published as usual.
    func sampleNow() {
        thread.withLock { $0?.control.requestSample() }
    }

    /// Reads the sources now, on the calling thread, through the monitor's own sampler; publishes
    /// nothing. A cheap reading that finds no footprint falls back to a full one.
    func measure() -> MemorySample {
        sampler.withLock { sampler in
            let sample = sampler.sample(.cheap)
            return sample.footprintBytes == nil ? sampler.sample(.full) : sample
        }
    }

    /// Reads the sources `depth` covers at `time`, for the sampling thread.
    func sample(_ depth: SampleDepth, at time: ContinuousClock.Instant = .now) -> MemorySample {
        sampler.withLock { $0.sample(depth, at: time) }
    }

    /// Records `event` as the latest and passes it on.
    func publish(_ event: PressureEvent) {
        latest.withLock { latest in
            switch event {
            case .sample(let sample, let level):
                latest = (level, sample)
            case .change(let change):
                latest.level = change.level
            }
        }
        events.emit(event)
    }

    deinit {
        stop()
    }
}
