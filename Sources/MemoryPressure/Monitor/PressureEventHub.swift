import Synchronization

/// Hands a monitor's events to its observers and streams, and keeps the latest level and sample.
final class PressureEventHub: Sendable {
    private struct State {
        var level: PressureLevel = .normal
        var latestSample: MemorySample?
        var observers: [UInt64: @Sendable (PressureEvent) -> Void] = [:]
        var streams: [UInt64: AsyncStream<PressureEvent>.Continuation] = [:]
        var nextIdentifier: UInt64 = 0

        mutating func makeIdentifier() -> UInt64 {
            defer { nextIdentifier += 1 }
            return nextIdentifier
        }
    }

    private let state = Mutex(State())

    var level: PressureLevel { state.withLock { $0.level } }

    var latestSample: MemorySample? { state.withLock { $0.latestSample } }

    /// Records `event` and passes it on: to the streams, then to the observers, outside the lock.
    func publish(_ event: PressureEvent) {
        let (observers, streams) = state.withLock { state in
            switch event {
            case .sample(let sample, let level):
                state.latestSample = sample
                state.level = level
            case .change(let change):
                state.level = change.level
            }
            return (Array(state.observers.values), Array(state.streams.values))
        }
        for stream in streams { stream.yield(event) }
        for observer in observers { observer(event) }
    }

    func addObserver(_ observer: @escaping @Sendable (PressureEvent) -> Void) -> UInt64 {
        state.withLock { state in
            let identifier = state.makeIdentifier()
            state.observers[identifier] = observer
            return identifier
        }
    }

    func removeObserver(_ identifier: UInt64) {
        state.withLock { _ = $0.observers.removeValue(forKey: identifier) }
    }

    /// A stream of the events from now on, until ``finishStreams()``; it keeps the newest
    /// `bufferLimit` events a slow reader has not taken.
    func makeStream(bufferLimit: Int) -> AsyncStream<PressureEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PressureEvent.self, bufferingPolicy: .bufferingNewest(bufferLimit))
        let identifier = state.withLock { state in
            let identifier = state.makeIdentifier()
            state.streams[identifier] = continuation
            return identifier
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.streams.removeValue(forKey: identifier) }
        }
        return stream
    }

    /// Ends every stream handed out so far.
    func finishStreams() {
        let streams = state.withLock { state in
            defer { state.streams.removeAll() }
            return Array(state.streams.values)
        }
        for stream in streams { stream.finish() }
    }
}
