@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Synchronization
import Testing

/// The one event mechanism: observers that last as long as their token, and streams.
struct EventSourceTests {
    @Test func cancellingTheTokenEndsTheObservationAndCancellingTwiceDoesNothing() {
        let source = EventSource<Int>()
        let seen = Mutex<[Int]>([])
        let token = source.observe { value in seen.withLock { $0.append(value) } }
        source.emit(1)
        token.cancel()
        token.cancel()
        source.emit(2)
        #expect(seen.withLock { $0 } == [1])
    }

    @Test func aStreamKeepsTheNewestEventsBeyondItsLimitAndEndsWhenFinished() async {
        let source = EventSource<Int>()
        let stream = source.stream(bufferLimit: 3)
        for value in 1...10 { source.emit(value) }
        source.finishStreams()
        var received: [Int] = []
        for await value in stream { received.append(value) }
        #expect(received == [8, 9, 10])
    }

    /// A limit of 0 is what `AsyncStream`'s `.bufferingNewest(0)` takes (deliver only to a waiting
    /// reader), not a programming error: it trapped, and a service that computed it crashed. A
    /// negative one counts as 0.
    @Test(arguments: [0, -1, Int.min])
    func aStreamWithoutABufferDeliversOnlyToAWaitingReader(limit: Int) async {
        let source = EventSource<Int>()
        let stream = source.stream(bufferLimit: limit)
        // Nobody waits yet: dropped.
        source.emit(0)
        let received = SharedBox<Int?>(nil)
        let reader = Task {
            var iterator = stream.makeAsyncIterator()
            received.value = await iterator.next()
        }
        // Emitted until the reader, once it waits, has one.
        var sent = 0
        while received.value == nil, sent < 100_000 {
            sent += 1
            source.emit(sent)
            await Task.yield()
        }
        await reader.value
        #expect(received.value != nil)
        #expect(received.value != 0, "the event emitted before the reader waited is not kept")
    }

    @Test func releasingTheTokenEndsTheObservation() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 64 * mebibyte))
        let kept = Mutex<[AppIdentifier]>([])
        let dropped = Mutex<[AppIdentifier]>([])
        let token = system.lifecycleEvents.observe { event in kept.withLock { $0.append(event.app) } }
        do {
            let released = system.lifecycleEvents.observe { event in dropped.withLock { $0.append(event.app) } }
            _ = released
        }
        let app = try system.register(.test("observed")) { IdleDelegate() }
        try await app.launch()
        try await app.terminate(reason: .explicit)
        #expect(kept.withLock { $0 }.contains(app.identifier))
        #expect(dropped.withLock { $0 }.isEmpty)

        token.cancel()
        let countAfterCancel = kept.withLock { $0.count }
        try await app.launch()
        try await app.terminate(reason: .explicit)
        #expect(kept.withLock { $0.count } == countAfterCancel)
    }

    @Test func aStreamAndAnObserverSeeTheSameEventsInOrder() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 64 * mebibyte))
        let observed = Mutex<[LifecycleEvent]>([])
        let token = system.lifecycleEvents.observe { event in observed.withLock { $0.append(event) } }
        let stream = system.lifecycleEvents.stream()
        let app = try system.register(.test("streamed")) { IdleDelegate() }
        try await app.launch()
        try await app.terminate(reason: .explicit)
        let expected = observed.withLock { $0 }
        var streamed: [LifecycleEvent] = []
        for await event in stream {
            streamed.append(event)
            if streamed.count == expected.count { break }
        }
        #expect(streamed == expected)
        #expect(expected.contains(.terminated(app: app.identifier, reason: .explicit, state: .active)))
        token.cancel()
    }
}
