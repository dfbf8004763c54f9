import Synchronization

/// Where a monitor, a memory system or a group of apps publishes what happens: every event goes to
/// each synchronous observer and each stream.
///
/// ```swift
/// let observation = system.events.observe { event in
///     if case .termination(let record) = event { logger.notice("\(record)") }
/// }
/// for await change in monitor.events.stream() { … }
/// ```
///
/// An observer is called on the thread that emits the event, in order, and misses nothing, with none
/// of the library's locks held: it may read any property and call any method of the library. It
/// must return quickly and must not wait for the emitter. A stream buffers for its own task, and a reader that falls behind loses the
/// oldest events beyond its buffer limit. Observing lasts as long as its ``ObservationToken``:
/// cancel the token, or let it go.
public final class EventSource<Event: Sendable>: ObserverRegistry {
    // Usable from inline, with ``emit(_:)``: an emitter (the monitor's thread, a hundred times a
    // second under pressure) runs it specialized for its event type, with none of the generic
    // metadata lookups an unspecialized emit made for its snapshot's types (a fifth of the
    // monitor's own time in `perf`).
    @usableFromInline struct State {
        /// In the order they began observing: the system's own bookkeeping, which observes first,
        /// hears each event before any user's observer. Arrays, so that an emit takes its snapshot
        /// under the lock by a retain, with no allocation.
        @usableFromInline var observers: [(identifier: UInt64, observer: @Sendable (Event) -> Void)] = []
        @usableFromInline var streams: [(identifier: UInt64, continuation: AsyncStream<Event>.Continuation)] = []
        var nextIdentifier: UInt64 = 0

        mutating func makeIdentifier() -> UInt64 {
            defer { nextIdentifier += 1 }
            return nextIdentifier
        }
    }

    @usableFromInline let state = LibraryLock(State())

    /// A source with no observers and no streams.
    package init() {}

    /// Calls `observer` with every event from now on, synchronously, on the thread that emits it,
    /// until the returned token is cancelled or released.
    ///
    /// - Parameter observer: Called once per event, in the order events are emitted; it must return
    ///   quickly and must not wait for the emitter.
    /// - Returns: The token that keeps the observer; keep it for as long as the events are wanted.
    public func observe(_ observer: @escaping @Sendable (Event) -> Void) -> ObservationToken {
        let identifier = state.withLock { state in
            let identifier = state.makeIdentifier()
            state.observers.append((identifier, observer))
            return identifier
        }
        return ObservationToken(removingFrom: self, key: identifier)
    }

    /// The events from now on, as an `AsyncStream`, until the source finishes its streams (a
    /// monitor that stops) or the reader stops iterating.
    ///
    /// - Parameter bufferLimit: How many events the stream keeps for a reader that falls behind;
    ///   beyond that, the oldest are dropped. 0 keeps none, as `AsyncStream`'s
    ///   `.bufferingNewest(0)` does: an event reaches the reader only if it is waiting for one. A
    ///   negative limit counts as 0.
    /// - Returns: A stream for one reader.
    public func stream(bufferLimit: Int = 1024) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(max(0, bufferLimit)))
        let identifier = state.withLock { state in
            let identifier = state.makeIdentifier()
            state.streams.append((identifier, continuation))
            return identifier
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.streams.removeAll { $0.identifier == identifier } }
        }
        return stream
    }

    /// Passes `event` to the streams, then to the observers, outside the lock.
    @inlinable
    package func emit(_ event: Event) {
        let (observers, streams) = state.withLock { ($0.observers, $0.streams) }
        callOut {
            for stream in streams { stream.continuation.yield(event) }
            for observer in observers { observer.observer(event) }
        }
    }

    package func removeObserver(_ key: UInt64) {
        // The observer is released as this statement ends, outside the lock: it may hold the last
        // reference to anything, a token of this source included, whose cancellation takes the lock.
        _ = state.withLock { state -> (@Sendable (Event) -> Void)? in
            guard let index = state.observers.firstIndex(where: { $0.identifier == key }) else { return nil }
            return state.observers.remove(at: index).observer
        }
    }

    /// Ends every stream handed out so far; observers stay.
    package func finishStreams() {
        let streams = state.withLock { state in
            defer { state.streams.removeAll() }
            return state.streams
        }
        callOut {
            for stream in streams { stream.continuation.finish() }
        }
    }
}

/// Keeps an observer registered: the one token type of the library, for observers of an
/// ``EventSource`` and of an `AppNotificationCenter`.
///
/// Observing an ``EventSource`` ends when the token is cancelled or released. An app's notification
/// center keeps its own reference, as `NotificationCenter` does: its observer stays until the token
/// is cancelled (or passed to `AppNotificationCenter.removeObserver(_:)`) or the app is terminated.
public final class ObservationToken: Sendable {
    /// Where the observer is registered; gone with it.
    private weak let owner: (any ObserverRegistry)?
    /// The observer's key there.
    private let key: UInt64
    private let isCancelled = Atomic<Bool>(false)

    package init(removingFrom owner: any ObserverRegistry, key: UInt64) {
        self.owner = owner
        self.key = key
    }

    /// Ends the observation; the observer is not called again once this returns, except by an emit
    /// already under way on another thread. Cancelling twice does nothing.
    public func cancel() {
        guard !isCancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        owner?.removeObserver(key)
    }

    /// Cancels the observation if its observer is registered in `registry`; a token of another
    /// registry is left alone.
    package func cancel(ifRegisteredIn registry: any ObserverRegistry) {
        guard owner === registry else { return }
        cancel()
    }

    deinit {
        cancel()
    }
}

/// Where an ``ObservationToken``'s observer is registered: what its cancellation removes it from.
package protocol ObserverRegistry: AnyObject, Sendable {
    /// Removes the observer registered under `key`; nothing when it is gone already.
    func removeObserver(_ key: UInt64)
}
