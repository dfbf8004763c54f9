import MemoryPressure
import Synchronization

/// Records the process's footprint (`/proc/self/statm`) every interval, with the level the monitor
/// announced and the app in the foreground: the timeline the report's figures are computed from.
final class FootprintRecorder: Sendable {
    private let samples = Mutex<[Timeline.Sample]>([])
    private let start: ContinuousClock.Instant
    /// Bytes held outside this process to add to each sample (the apps' child processes), or nil.
    private let outsideBytes: (@Sendable () -> Int)?

    /// A recorder whose buffer is reserved for `expectedCount` samples now, so recording does not
    /// grow the process's allocations as the run goes on. `outsideBytes`, when given, is read at
    /// each sample and added to the process's own footprint.
    init(start: ContinuousClock.Instant, expectedCount: Int, outsideBytes: (@Sendable () -> Int)? = nil) {
        self.start = start
        self.outsideBytes = outsideBytes
        samples.withLock { $0.reserveCapacity(expectedCount) }
    }

    /// Records until the task is cancelled. `level` and `foreground` are read at each sample.
    func run(every interval: Duration, level: @Sendable () -> PressureLevel, foreground: @Sendable () -> AppIdentifier?) async {
        let clock = ContinuousClock()
        var next = clock.now
        while !Task.isCancelled {
            record(level: level(), foreground: foreground())
            next += interval
            if next < clock.now { next = clock.now }
            try? await Task.sleep(until: next, clock: clock)
        }
    }

    /// Records one sample now.
    func record(level: PressureLevel, foreground: AppIdentifier?) {
        guard var footprint = try? ProcessMemory.current().residentBytes else { return }
        if let outsideBytes { footprint += outsideBytes() }
        let sample = Timeline.Sample(
            seconds: (ContinuousClock.now - start).inSeconds, footprintBytes: footprint,
            level: level, foreground: foreground?.rawValue
        )
        samples.withLock { $0.append(sample) }
    }

    /// The samples so far.
    var recorded: [Timeline.Sample] { samples.withLock { $0 } }

    /// The last sample's footprint, or 0 before the first.
    var latestFootprintBytes: Int { samples.withLock { $0.last?.footprintBytes ?? 0 } }
}
