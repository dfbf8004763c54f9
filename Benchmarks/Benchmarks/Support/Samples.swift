#if canImport(Glibc)
import Glibc
#endif
import MemoryPressure

extension PressureMonitor {
    /// The first sample the monitor publishes after `instant`, looking every half millisecond from
    /// the calling thread, which it blocks (for a thread that is not the cooperative pool's).
    public func sample(after instant: ContinuousClock.Instant, within limit: Duration = .seconds(5)) throws -> MemorySample {
        let deadline = ContinuousClock.now + limit
        while true {
            if let sample = latestSample, sample.time > instant { return sample }
            guard ContinuousClock.now < deadline else { throw BenchmarkFailure("the monitor took no sample within \(limit)") }
            usleep(500)
        }
    }

    /// The first sample the monitor publishes after `instant`, looking every millisecond.
    public func sample(after instant: ContinuousClock.Instant, within limit: Duration = .seconds(5)) async throws -> MemorySample {
        let deadline = ContinuousClock.now + limit
        while true {
            if let sample = latestSample, sample.time > instant { return sample }
            guard ContinuousClock.now < deadline else { throw BenchmarkFailure("the monitor took no sample within \(limit)") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}
