import Synchronization

/// When an app's heap moves its new buffers to an arena of its own, and how many such arenas the
/// process keeps.
///
/// Heaps start in the process's shared arena pool. A heap that grows past ``ownArenaThreshold``
/// takes an arena of its own, while fewer than ``ownArenaLimit`` exist, for the buffers it makes
/// from then on: the largest apps then hold their big buffers apart, and terminating one destroys
/// its arena outright. The limit keeps the arenas (and the epoch refresh's cost, about 9 µs each)
/// bounded, whatever the number of apps.
package struct HeapArenaPolicy: Hashable, Sendable {
    /// The heap's bytes (after the allocation) from which its buffers go to an arena of its own;
    /// 0: from the heap's creation.
    package var ownArenaThreshold: Int

    /// Own arenas from 64 MiB.
    package static let standard = HeapArenaPolicy(ownArenaThreshold: 64 << 20)
    /// An own arena from the heap's creation, while the limit allows.
    package static let ownArenaFromCreation = HeapArenaPolicy(ownArenaThreshold: 0)

    /// The most own arenas the process has at once.
    package static let ownArenaLimit = 64

    private static let ownArenas = Atomic<Int>(0)

    /// Takes one of the ``ownArenaLimit`` own arenas; false when all are taken.
    static func claimOwnArena() -> Bool {
        if ownArenas.add(1, ordering: .relaxed).newValue <= ownArenaLimit { return true }
        ownArenas.subtract(1, ordering: .relaxed)
        return false
    }

    /// Gives back an own arena claimed with ``claimOwnArena()``.
    static func returnOwnArena() {
        ownArenas.subtract(1, ordering: .relaxed)
    }
}
