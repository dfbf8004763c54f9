/// jemalloc's process-wide statistics, in bytes, as of one epoch.
///
/// Codable as an object of byte counts: `allocatedBytes`, `activeBytes`, `residentBytes`,
/// `mappedBytes`, `retainedBytes` and `metadataBytes`.
public struct JemallocStatistics: Hashable, Sendable, Codable {
    /// Bytes allocated by the application, including bytes parked in thread caches.
    public var allocated: Int
    /// Bytes in active pages: `allocated` rounded up to pages, plus fragmentation.
    public var active: Int
    /// Bytes in physically resident data pages mapped by jemalloc, including dirty pages not yet
    /// returned to the operating system and jemalloc's metadata.
    public var resident: Int
    /// Bytes in active extents mapped by jemalloc.
    public var mapped: Int
    /// Bytes of virtual memory retained for reuse rather than unmapped; not resident.
    public var retained: Int
    /// Bytes dedicated to jemalloc's own metadata.
    public var metadata: Int

    /// Statistics with the given figures, in bytes.
    public init(allocated: Int, active: Int, resident: Int, mapped: Int, retained: Int, metadata: Int) {
        self.allocated = allocated
        self.active = active
        self.resident = resident
        self.mapped = mapped
        self.retained = retained
        self.metadata = metadata
    }

    private enum CodingKeys: String, CodingKey {
        case allocated = "allocatedBytes"
        case active = "activeBytes"
        case resident = "residentBytes"
        case mapped = "mappedBytes"
        case retained = "retainedBytes"
        case metadata = "metadataBytes"
    }

    /// Refreshes the epoch and reads the statistics through cached MIBs.
    public static func current() throws(JemallocError) -> JemallocStatistics {
        try JemallocStatistics.Reader.shared.get().read(advancingEpoch: true)
    }
}

extension JemallocStatistics {
    /// Reads the process statistics through MIBs resolved once, for a sampling loop.
    public struct Reader: Sendable {
        static let shared = Result { () throws(JemallocError) in try Reader() }

        private let allocated: MallctlMIB<Int>
        private let active: MallctlMIB<Int>
        private let resident: MallctlMIB<Int>
        private let mapped: MallctlMIB<Int>
        private let retained: MallctlMIB<Int>
        private let metadata: MallctlMIB<Int>

        /// Resolves every key once. Throws ``JemallocError/Kind-swift.struct/statisticsDisabled``
        /// when jemalloc was built without statistics.
        public init() throws(JemallocError) {
            allocated = try MallctlKey.statsAllocated.mib()
            active = try MallctlKey.statsActive.mib()
            resident = try MallctlKey.statsResident.mib()
            mapped = try MallctlKey.statsMapped.mib()
            retained = try MallctlKey.statsRetained.mib()
            metadata = try MallctlKey.statsMetadata.mib()
        }

        /// Reads the statistics, refreshing the epoch first unless `advancingEpoch` is false (then
        /// the figures are those of the last refresh made anywhere in the process).
        public func read(advancingEpoch: Bool = true) throws(JemallocError) -> JemallocStatistics {
            if advancingEpoch {
                try Jemalloc.advanceEpoch()
            }
            return JemallocStatistics(
                allocated: try allocated.read(),
                active: try active.read(),
                resident: try resident.read(),
                mapped: try mapped.read(),
                retained: try retained.read(),
                metadata: try metadata.read()
            )
        }
    }
}
