import Synchronization

/// Broadcasts the lifecycle events of the apps that share it to every subscribed stream.
///
/// Give one to each `App` the system hosts; a `MemorySystem` or the stress tool subscribes to check
/// invariants (valid callback sequences) and to record terminations.
public final class LifecycleEvents: Sendable {
    private let subscribers = Mutex<(next: Int, continuations: [Int: AsyncStream<LifecycleEvent>.Continuation])>(
        (0, [:])
    )

    /// A broadcaster with no subscribers.
    public init() {}

    /// The events emitted from now on, until the stream's consumer stops iterating. Events are
    /// buffered without limit, so the consumer must keep up.
    public func stream() -> AsyncStream<LifecycleEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: LifecycleEvent.self)
        let id = subscribers.withLock { state in
            defer { state.next += 1 }
            state.continuations[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func emit(_ event: LifecycleEvent) {
        subscribers.withLock { state in
            for continuation in state.continuations.values {
                continuation.yield(event)
            }
        }
    }
}
