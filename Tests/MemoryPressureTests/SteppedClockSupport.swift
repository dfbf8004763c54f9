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
