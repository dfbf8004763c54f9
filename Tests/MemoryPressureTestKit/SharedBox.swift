import Synchronization

/// A value that several closures share, read and changed under a lock: what an app's callback, an
/// observer or a sample source hands back to the test that made it.
public final class SharedBox<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    /// A box holding `value`.
    public init(_ value: Value) {
        storage = Mutex(value)
    }

    /// The value now; setting it replaces it whole.
    public var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    /// Runs `body` on the value under the lock, so that a read and a change are one step.
    public func update<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        storage.withLock { body(&$0) }
    }
}

/// A list that several closures append to, in the order they do: the callbacks an app's delegate
/// ran, the keys an eviction handler was given, the lines a log handler received.
public final class SharedLog<Entry: Sendable>: Sendable {
    private let entries = SharedBox<[Entry]>([])

    /// An empty log.
    public init() {}

    /// Adds `entry` at the end.
    public func append(_ entry: Entry) {
        entries.update { $0.append(entry) }
    }

    /// Every entry, in order.
    public var all: [Entry] {
        entries.value
    }

    /// The entries since the last `take()` or `clear()`, leaving the log empty.
    public func take() -> [Entry] {
        entries.update { entries in
            defer { entries = [] }
            return entries
        }
    }

    /// Empties the log.
    public func clear() {
        entries.value = []
    }
}
