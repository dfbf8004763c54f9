import CJemalloc

/// One jemalloc arena, named by its index.
///
/// Arenas made with ``create()`` hold only what is allocated in them explicitly (see
/// ``allocate(byteCount:alignment:zeroed:)``), so their statistics measure exactly those bytes,
/// and destroying one returns all its pages at once.
public struct Arena: Hashable, Sendable, CustomStringConvertible {
    /// The arena's index, as used in mallctl names such as `arena.<i>.purge`.
    public let index: UInt32

    /// The arena with this index. No check is made that it exists; reads of one that does not fail
    /// with ``JemallocError/Kind-swift.struct/unknownKey`` or
    /// ``JemallocError/Kind-swift.struct/invalidValue``.
    public init(index: UInt32) {
        self.index = index
    }

    /// The most arenas jemalloc makes, automatic ones included (`MALLOCX_ARENA_LIMIT`: the arena
    /// index has 12 bits in `mallocx`'s flags).
    package static let indexLimit = 4_095

    /// Creates an arena of the process's default configuration (`arenas.create`).
    ///
    /// jemalloc publishes a new arena's statistics only from the next epoch on, so this refreshes
    /// the epoch once, and ``statistics()`` can be read at once.
    ///
    /// - Throws: ``JemallocError`` of kind ``JemallocError/Kind-swift.struct/arenaLimitReached``
    ///   when every arena index is in use (jemalloc makes at most 4,095 arenas, automatic ones
    ///   included).
    public static func create() throws(JemallocError) -> Arena {
        let arena = try createWithoutEpochRefresh()
        try Jemalloc.advanceEpoch()
        return arena
    }

    /// Creates an arena without refreshing the epoch: the refresh costs about 9 µs per arena in the
    /// process, so an owner that does not read the new arena's statistics at once skips it.
    package static func createWithoutEpochRefresh() throws(JemallocError) -> Arena {
        Arena(index: try MallctlKey.createArena.read())
    }

    /// Whether the arena exists now (`arena.<i>.initialized`); false once it has been destroyed.
    ///
    /// jemalloc answers as of the last epoch, so this refreshes the epoch first.
    public var isInitialized: Bool {
        get throws(JemallocError) {
            try Jemalloc.advanceEpoch()
            return try MallctlKey<Bool>("arena.\(index).initialized").read()
        }
    }

    /// The arena's statistics as of the last ``Jemalloc/advanceEpoch()``.
    public func statistics() throws(JemallocError) -> ArenaStatistics {
        try ArenaStatistics.Reader.shared.get().read(self)
    }

    /// Returns the arena's unused dirty and muzzy pages to the operating system now.
    public func purge() throws(JemallocError) {
        try Mallctl.perform("arena.\(index).purge")
    }

    /// Returns the unused pages whose decay time has passed, as the decay clock would.
    public func decay() throws(JemallocError) {
        try Mallctl.perform("arena.\(index).decay")
    }

    /// Destroys a created arena, unmapping all its pages; the index may later be reused by
    /// ``create()``.
    ///
    /// Only arenas from ``create()`` can be destroyed, and only once every ``ArenaAllocation`` in
    /// them has been freed: jemalloc discards the arena's memory whatever still points into it.
    /// Owners that hand out allocations must therefore destroy the arena only after the last one is
    /// gone.
    public func destroy() throws(JemallocError) {
        try Mallctl.perform("arena.\(index).destroy")
    }

    /// Allocates `byteCount` bytes in this arena, bypassing the thread cache so that the bytes are
    /// counted to this arena from the first moment and return to it when freed.
    public func allocate(
        byteCount: Int,
        alignment: Int = 16,
        zeroed: Bool = false
    ) throws(JemallocError) -> ArenaAllocation {
        try ArenaAllocation(byteCount: byteCount, alignment: alignment, zeroed: zeroed, arena: self)
    }

    public var description: String { "arena \(index)" }
}
