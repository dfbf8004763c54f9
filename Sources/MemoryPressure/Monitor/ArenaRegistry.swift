import Jemalloc
import Synchronization

/// The per-app arenas whose bytes go into every full sample.
final class ArenaRegistry: Sendable {
    private let arenas = Mutex<Set<Arena>>([])

    func insert(_ arena: Arena) {
        arenas.withLock { _ = $0.insert(arena) }
    }

    func remove(_ arena: Arena) {
        arenas.withLock { _ = $0.remove(arena) }
    }

    var all: Set<Arena> {
        arenas.withLock { $0 }
    }
}
