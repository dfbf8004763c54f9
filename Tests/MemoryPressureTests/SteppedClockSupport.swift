@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
import MemoryPressureTestKit

extension PressureMonitor {
    /// Asks the sampling thread for a sample and returns true once it has published one taken at
    /// its clock's time now or later (false after the generous deadline): the sampling thread took
    /// it in a pass that first did everything due by then (a limit check, a tick), and every event
    /// of those, published before the sample, is out. What has not happened by then was not due
    /// at this instant, whatever the machine's load: the way to assert that nothing happened on a
    /// stepped clock.
    func hasSampledAtTheTimeNow() async -> Bool {
        let now = configuration.clock.now
        let samples = events.stream()
        sampleNow()
        return await samples.first { event in event.sample.map { $0.time >= now } ?? false } != nil
    }
}

extension ManualClock {
    /// Steps the clock `count` times by `duration`, each time waiting until `monitor` has sampled
    /// at the instant stepped to (``PressureMonitor/hasSampledAtTheTimeNow()``); false when one such
    /// sample did not come.
    func step(by duration: Duration, times count: Int, sampledBy monitor: PressureMonitor) async -> Bool {
        for _ in 0..<count {
            step(by: duration)
            guard await monitor.hasSampledAtTheTimeNow() else { return false }
        }
        return true
    }
}

extension MemorySystem {
    /// Returns true once the system's deadline timers have looked at their clock's time now (see
    /// ``DeadlineTimers/haveLookedAtTheTimeNow()``): what was not done by then was not due.
    func deadlinesHaveLookedAtTheTimeNow() async -> Bool {
        await threads.timers.haveLookedAtTheTimeNow()
    }
}

extension MemorySystem {
    /// Asks the monitor for a sample and returns true once the ladder has finished with one taken
    /// at the clock's time now or later (false after the generous deadline): it has enforced the
    /// limits, run and judged the give-up on it, and, taking samples in order, on every one before.
    /// What the ladder has not done by then it was not to do up to this instant. The system must
    /// be running.
    func ladderHasHandledASampleAtTheTimeNow() async -> Bool {
        let now = configuration.clock.now
        let handled = journal.handledSamples.stream()
        monitor.sampleNow()
        return await handled.first { $0 >= now } != nil
    }
}

extension ManualClock {
    /// Steps the clock `count` times by `duration`, each time waiting until `system`'s ladder has
    /// finished with a sample at the instant stepped to
    /// (``MemorySystem/ladderHasHandledASampleAtTheTimeNow()``), and stopping early once `until`
    /// holds; false when such a sample did not come.
    func step(
        by duration: Duration, times count: Int, handledBy system: MemorySystem, until done: () -> Bool = { false }
    ) async -> Bool {
        for _ in 0..<count where !done() {
            step(by: duration)
            guard await system.ladderHasHandledASampleAtTheTimeNow() else { return false }
        }
        return true
    }
}
