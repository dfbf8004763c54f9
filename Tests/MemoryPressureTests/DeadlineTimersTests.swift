@_spi(Benchmarks) @testable import MemoryPressure
import MemoryPressureTestKit
import Synchronization
import Testing

/// Every deadline of the apps in one timer heap on one thread.
@Suite struct DeadlineTimersTests {
    @Test func deadlinesRunInOrderAndCancelledOnesNever() async {
        let timers = DeadlineTimers()
        defer { timers.stop() }
        let log = SharedLog<Int>()
        let start = ContinuousClock.now
        for (index, delay) in [30, 10, 20, 40].enumerated() {
            timers.schedule(at: start + .milliseconds(delay)) { log.append(index) }
        }
        let cancelled = timers.schedule(at: start + .milliseconds(15)) { log.append(-1) }
        timers.cancel(cancelled)
        // One already past runs at once.
        timers.schedule(at: start - .seconds(1)) { log.append(9) }
        #expect(await eventually { log.all.count == 5 })
        #expect(log.all == [9, 1, 2, 0, 3])
        // Nothing runs before its deadline.
        let early = Atomic<Bool>(false)
        let deadline = ContinuousClock.now + .milliseconds(50)
        timers.schedule(at: deadline) { if ContinuousClock.now < deadline { early.store(true, ordering: .relaxed) } }
        try? await Task.sleep(for: .milliseconds(120))
        let ranEarly = early.load(ordering: .relaxed)
        #expect(!ranEarly)
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
