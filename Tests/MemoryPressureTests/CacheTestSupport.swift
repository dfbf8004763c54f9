import MemoryPressure
import Synchronization

/// Discardable content for tests, counting its accesses with the library's counter.
final class TestContent: DiscardableContent {
    let id: Int
    private let access = ContentAccessCount()

    init(id: Int) {
        self.id = id
    }

    func beginContentAccess() -> Bool { access.begin() }
    func endContentAccess() { access.end() }
    func discardContentIfPossible() { access.discardIfPossible() }
    var isContentDiscarded: Bool { access.isDiscarded }
    var openAccesses: Int { access.openAccesses }
}

/// Collects what an eviction handler is given.
final class EvictionLog<Key: Sendable>: Sendable {
    private let keys = Mutex<[Key]>([])

    func record(_ key: Key) {
        keys.withLock { $0.append(key) }
    }

    var recorded: [Key] { keys.withLock { $0 } }

    func clear() {
        keys.withLock { $0.removeAll() }
    }
}

extension AppIdentifier {
    /// A valid identifier for tests.
    static func test(_ name: String) -> AppIdentifier {
        do { return try AppIdentifier(name) } catch { preconditionFailure("\(error)") }
    }
}
