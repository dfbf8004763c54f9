/// Broadcasts the lifecycle events of the apps that share it to every observer and stream.
///
/// Give one to each `App` the system hosts; a `MemorySystem` or the stress tool subscribes to check
/// invariants (valid callback sequences) and to record terminations.
public final class LifecycleEvents: Sendable {
    private let broadcaster = EventBroadcaster<LifecycleEvent>()

    /// A broadcaster with no subscribers.
    public init() {}

    /// Identifies an observer added with ``addObserver(_:)``.
    public struct ObserverID: Hashable, Sendable {
        fileprivate let rawValue: UInt64
    }

    /// The events emitted from now on, until the stream's consumer stops iterating. Events are
    /// buffered without limit, so the consumer must keep up.
    public func stream() -> AsyncStream<LifecycleEvent> {
        broadcaster.makeStream()
    }

    /// Calls `observer` with every event from now on, synchronously, on the thread that emits it
    /// and while the app's lifecycle record is locked: the observer sees each app's events in
    /// order and must return quickly, without calling back into the app.
    @discardableResult
    public func addObserver(_ observer: @escaping @Sendable (LifecycleEvent) -> Void) -> ObserverID {
        ObserverID(rawValue: broadcaster.addObserver(observer))
    }

    /// Stops calling the observer `identifier` names.
    public func removeObserver(_ identifier: ObserverID) {
        broadcaster.removeObserver(identifier.rawValue)
    }

    func emit(_ event: LifecycleEvent) {
        broadcaster.emit(event)
    }
}
