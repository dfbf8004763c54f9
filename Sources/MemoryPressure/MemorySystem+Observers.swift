extension MemorySystem {
    /// Identifies an observer added with ``addObserver(_:)``.
    public struct ObserverID: Hashable, Sendable {
        fileprivate let rawValue: UInt64
    }

    /// Calls `observer` with every event from now on, synchronously, on the thread that emits it:
    /// the task running ``run()`` for pressure, purges, warnings and ladder runs, and the app's run
    /// loop for its termination. Unlike a stream from ``events(bufferLimit:)``, an observer misses
    /// nothing and needs no task of its own; it must return quickly and must not call into the apps.
    @discardableResult
    public func addObserver(_ observer: @escaping @Sendable (MemorySystemEvent) -> Void) -> ObserverID {
        ObserverID(rawValue: broadcaster.addObserver(observer))
    }

    /// Stops calling the observer `identifier` names.
    public func removeObserver(_ identifier: ObserverID) {
        broadcaster.removeObserver(identifier.rawValue)
    }
}
