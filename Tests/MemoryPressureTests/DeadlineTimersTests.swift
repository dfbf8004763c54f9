@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Synchronization
import Testing

/// Every deadline of the apps in one timer heap on one thread.
@Suite struct DeadlineTimersTests {
    /// On a manual clock: each step of the clock runs what has come due, in deadline order, and
    /// nothing before its deadline; a cancelled deadline never runs. Nothing sleeps.
    @Test func deadlinesRunInOrderAtTheirInstantsAndCancelledOnesNever() async {
        let clock = ManualClock()
        let timers = DeadlineTimers(clock: clock)
        defer { timers.stop() }
        let log = SharedLog<Int>()
        let start = clock.now
        for (index, delay) in [30, 10, 20, 40].enumerated() {
            timers.schedule(at: start + .milliseconds(delay)) { log.append(index) }
        }
        let cancelled = timers.schedule(at: start + .milliseconds(15)) { log.append(-1) }
        timers.cancel(cancelled)
        // One already past runs at once, without a step.
        timers.schedule(at: start - .seconds(1)) { log.append(9) }
        #expect(await eventually { log.all == [9] })

        // Stepped to just before the second deadline: the first has run, nothing else.
        clock.step(by: .milliseconds(19))
        #expect(await eventually { log.all == [9, 1] })
        #expect(await timers.haveLookedAtTheTimeNow())
        #expect(log.all == [9, 1], "the deadline 1 ms ahead did not run")

        // Past the cancelled one's instant and on to the end: the rest, in order, and never -1.
        clock.step(by: .milliseconds(1))
        #expect(await eventually { log.all == [9, 1, 2] })
        clock.step(by: .milliseconds(30))
        #expect(await eventually { log.all == [9, 1, 2, 0, 3] })
        #expect(await timers.haveLookedAtTheTimeNow())
        #expect(log.all == [9, 1, 2, 0, 3])
    }

    @Test func aFloodOfTransitionsHoldsNoMemoryForDeadlinesThatNoLongerMatter() async throws {
        // Five-second deadlines (the defaults), and thousands of transitions in far less time: a
        // sleeping task per deadline held each transition's timer until its deadline, tens of MiB
        // at a few thousand transitions a second.
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33))
        let app = try system.register(.test("flooded")) { RecordingDelegate() }
        try await app.launch()
        let rounds = 5_000
        for _ in 0..<rounds {
            try await app.enterBackground()
            try await app.enterForeground()
        }
        // Each round set a deadline for didEnterBackground, cancelled as the callback returned:
        // none of them may still be held.
        let counts = system.threads.timers.counts
        #expect(counts.pending < 100, "\(counts.pending) deadlines still set after \(rounds) rounds")
        #expect(counts.entries <= 2 * counts.pending + 64, "\(counts.entries) heap entries for \(counts.pending) deadlines")
    }
}
