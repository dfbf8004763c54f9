/// Memory the system can purge by category and event: what ``PurgeRegistry`` enumerates.
public protocol Purgeable: AnyObject, Sendable {
    /// The name, for reports.
    var name: String { get }
    /// The app that owns the memory.
    var owner: AppIdentifier { get }
    /// What the memory holds, which decides what each event purges.
    var category: CacheCategory { get }
    /// Where the values keep their bytes.
    var payloadLocation: PayloadLocation { get }
    /// The sum of the declared costs held now.
    var totalCost: Int { get }
    /// The number of entries held now.
    var count: Int { get }

    /// Applies the category's action for `event`, returning what was removed.
    @discardableResult
    func purge(for event: PurgeEvent) -> CachePurgeResult
}

/// What one purge or trim of a cache removed.
public struct CachePurgeResult: Hashable, Sendable {
    /// The number of entries removed.
    public var removedCount: Int
    /// The sum of their declared costs.
    public var releasedCost: Int

    /// A result with these counts.
    public init(removedCount: Int = 0, releasedCost: Int = 0) {
        self.removedCount = removedCount
        self.releasedCost = releasedCost
    }
}
