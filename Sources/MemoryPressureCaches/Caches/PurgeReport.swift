import Jemalloc
import MemoryPressureRuntime

/// What one purge of caches and stores gave back, as `MemorySystemEvent.purge(_:step:)` reports
/// it.
public struct PurgeReport: Sendable {
    /// One cache's or store's share of the purge.
    public struct Entry: Hashable, Sendable {
        /// What was purged.
        public enum Source: Hashable, Sendable {
            /// A cache, with its name and category.
            case cache(name: String, category: CacheCategory)
            /// A releasable store, such as a backing store.
            case store
        }

        /// The app that owns it.
        public var app: AppIdentifier
        /// What it is.
        public var source: Source
        /// The bytes it released: declared cost for a cache, the store's bytes for a store.
        public var releasedBytes: Int
        /// The entries a cache removed (1 for a store that released).
        public var removedCount: Int

        /// An entry of a purge report.
        package init(app: AppIdentifier, source: Source, releasedBytes: Int, removedCount: Int) {
            self.app = app
            self.source = source
            self.releasedBytes = releasedBytes
            self.removedCount = removedCount
        }
    }

    /// The event purged for.
    public var event: PurgeEvent
    /// Every cache and store that released something.
    public var entries: [Entry] = []
    /// For each affected app with a heap, how far its heap's allocated bytes fell.
    package var heapBytesReturned: [AppIdentifier: Int] = [:]
    /// Arena purges jemalloc refused; the bytes were freed but their pages may linger until decay.
    package var arenaPurgeFailures: [JemallocError] = []

    /// The bytes released across all entries; `Int.max` when the sum is larger (declared costs
    /// may each be as large as `Int.max`; the sum trapped).
    public var releasedBytes: Int { entries.reduce(0) { $0.addingClamped($1.releasedBytes) } }

    /// The bytes released by `app`'s caches and stores; `Int.max` when the sum is larger.
    package func releasedBytes(of app: AppIdentifier) -> Int {
        entries.lazy.filter { $0.app == app }.reduce(0) { $0.addingClamped($1.releasedBytes) }
    }
}

extension PurgeReport: CustomStringConvertible {
    /// The report for people and logs: `purge for warning: 5 caches and stores released 12 MiB`.
    public var description: String {
        "purge for \(event): \(entries.count) cache\(entries.count == 1 ? "" : "s") and stores released \(ByteCount(releasedBytes))"
            + (arenaPurgeFailures.isEmpty ? "" : ", \(arenaPurgeFailures.count) arena purges refused")
    }
}
