import MemoryPressure
import Synchronization

/// A deterministic generator (SplitMix64), so a failing sequence can be replayed from its seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

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
