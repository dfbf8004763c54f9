/// One arena's statistics as of one epoch.
///
/// Codable as an object: `smallAllocatedBytes`, `largeAllocatedBytes`, `activePages`, `dirtyPages`,
/// `muzzyPages`, `residentBytes` and `mappedBytes`.
public struct ArenaStatistics: Hashable, Sendable, Codable {
    /// Bytes allocated in small size classes (up to 14 KiB by default).
    public var smallAllocated: Int
    /// Bytes allocated in large size classes.
    public var largeAllocated: Int
    /// Pages in active extents.
    public var activePages: Int
    /// Pages that are unused but not yet returned to the operating system.
    public var dirtyPages: Int
    /// Pages that were advised away lazily (`MADV_FREE`) and may still be resident.
    public var muzzyPages: Int
    /// Bytes in physically resident data pages mapped by the arena.
    public var resident: Int
    /// Bytes in active extents mapped by the arena.
    public var mapped: Int

    /// Statistics with the given figures.
    public init(
        smallAllocated: Int,
        largeAllocated: Int,
        activePages: Int,
        dirtyPages: Int,
        muzzyPages: Int,
        resident: Int,
        mapped: Int
    ) {
        self.smallAllocated = smallAllocated
        self.largeAllocated = largeAllocated
        self.activePages = activePages
        self.dirtyPages = dirtyPages
        self.muzzyPages = muzzyPages
        self.resident = resident
        self.mapped = mapped
    }

    /// Bytes allocated in the arena, small and large.
    public var allocated: Int { smallAllocated + largeAllocated }

    private enum CodingKeys: String, CodingKey {
        case smallAllocated = "smallAllocatedBytes"
        case largeAllocated = "largeAllocatedBytes"
        case activePages, dirtyPages, muzzyPages
        case resident = "residentBytes"
        case mapped = "mappedBytes"
    }
}

extension ArenaStatistics {
    /// Reads any arena's statistics through MIBs resolved once, pointing them at the arena asked for.
    public struct Reader: Sendable {
        static let shared = Result { () throws(JemallocError) in try Reader() }

        /// Position of the arena index in `stats.arenas.<i>.*`.
        private static let arenaPosition = 2

        private let smallAllocated: MallctlMIB<Int>
        private let largeAllocated: MallctlMIB<Int>
        private let activePages: MallctlMIB<Int>
        private let dirtyPages: MallctlMIB<Int>
        private let muzzyPages: MallctlMIB<Int>
        private let resident: MallctlMIB<Int>
        private let mapped: MallctlMIB<Int>

        /// Resolves every key once.
        public init() throws(JemallocError) {
            func resolve(_ leaf: String) throws(JemallocError) -> MallctlMIB<Int> {
                try MallctlKey<Int>("stats.arenas.0.\(leaf)").mib()
            }
            smallAllocated = try resolve("small.allocated")
            largeAllocated = try resolve("large.allocated")
            activePages = try resolve("pactive")
            dirtyPages = try resolve("pdirty")
            muzzyPages = try resolve("pmuzzy")
            resident = try resolve("resident")
            mapped = try resolve("mapped")
        }

        /// Reads `arena`'s statistics as of the last ``Jemalloc/advanceEpoch()``.
        public func read(_ arena: Arena) throws(JemallocError) -> ArenaStatistics {
            let index = Int(arena.index)
            func value(_ mib: MallctlMIB<Int>) throws(JemallocError) -> Int {
                try mib.read(replacingIndexAt: Self.arenaPosition, with: index)
            }
            return ArenaStatistics(
                smallAllocated: try value(smallAllocated),
                largeAllocated: try value(largeAllocated),
                activePages: try value(activePages),
                dirtyPages: try value(dirtyPages),
                muzzyPages: try value(muzzyPages),
                resident: try value(resident),
                mapped: try value(mapped)
            )
        }
    }
}
