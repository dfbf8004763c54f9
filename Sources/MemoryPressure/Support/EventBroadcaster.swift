import Synchronization

/// Hands each event to every observer (called synchronously, on the emitting thread) and every
/// stream (buffered for its consumer). The plumbing behind the library's event sources.
final class EventBroadcaster<Event: Sendable>: Sendable {
    typealias Observer = @Sendable (Event) -> Void

    private struct State {
        var observers: [UInt64: Observer] = [:]
        var streams: [UInt64: AsyncStream<Event>.Continuation] = [:]
        var nextIdentifier: UInt64 = 0

        mutating func makeIdentifier() -> UInt64 {
            defer { nextIdentifier += 1 }
            return nextIdentifier
        }
    }

    private let state = Mutex(State())

    init() {}

    /// Passes `event` to the streams, then to the observers, outside the lock.
    func emit(_ event: Event) {
        let (observers, streams) = state.withLock { (Array($0.observers.values), Array($0.streams.values)) }
        for stream in streams { stream.yield(event) }
        for observer in observers { observer(event) }
    }

    func addObserver(_ observer: @escaping Observer) -> UInt64 {
        state.withLock { state in
            let identifier = state.makeIdentifier()
            state.observers[identifier] = observer
            return identifier
        }
    }

    func removeObserver(_ identifier: UInt64) {
        state.withLock { _ = $0.observers.removeValue(forKey: identifier) }
    }

    /// The events from now on, until ``finishStreams()`` or until the consumer stops iterating.
    func makeStream(
        bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: bufferingPolicy)
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
