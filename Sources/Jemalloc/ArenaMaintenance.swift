import Synchronization

/// The one owner of the commands that walk or tear down arenas: purging all of them, purging,
/// decaying or destroying one. ``Mallctl/perform(_:)`` runs every `arena.*` command through it.
///
/// jemalloc 5.3's all-arenas purge (`arena.4096.purge`) looks each arena up and lets go of the lock
/// that guards the arena table before it purges that arena, so an `arena.<i>.destroy` on another
/// thread can free the arena under it, and the process dies inside jemalloc. These commands
/// therefore run one at a time, process-wide. They are rare (a purge per reclamation, a destruction
/// per closed heap) and cost far less than the pages they return, so serialising them costs nothing
/// that matters; allocation and statistics reads never take this lock.
enum ArenaMaintenance {
    private static let lock = Mutex(())

    /// Runs `command` with no other arena command under way.
    static func serialize(_ command: () throws(JemallocError) -> Void) throws(JemallocError) {
        try lock.withLock { _ throws(JemallocError) in try command() }
    }
}
