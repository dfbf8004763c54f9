import MemoryPressureRuntime
import MemoryPressureMeasurement
/// Memory the system can purge by category and event, such as a ``PurgeableCache``: what
/// `MemorySystem.register(_:)` takes.
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

    /// Applies the category's action for `event`.
    ///
    /// - Parameter event: What makes the system purge.
    /// - Returns: What was removed.
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
    ///
    /// - Parameters:
    ///   - removedCount: The number of entries removed.
    ///   - releasedCost: The sum of their declared costs.
    public init(removedCount: Int = 0, releasedCost: Int = 0) {
        self.removedCount = removedCount
        self.releasedCost = releasedCost
    }
}

/// What makes the system purge caches and stores.
///
/// This enumeration is closed: its cases are fixed by the contract it models, and a `switch`
/// may list them all. See “Types That Grow” in the MemoryPressure documentation.
public enum PurgeEvent: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The owning app is entering the background.
    case enteringBackground
    /// The system is at the warning level.
    case warning
    /// The system is at the critical level.
    case critical

    /// The event a pressure level calls for: none at `normal`.
    package init?(_ level: PressureLevel) {
        switch level {
        case .normal: return nil
        case .warning: self = .warning
        case .critical: self = .critical
        }
    }

    /// The event in words: `entering background`, `warning` or `critical`.
    public var description: String {
        switch self {
        case .enteringBackground: "entering background"
        case .warning: "warning"
        case .critical: "critical"
        }
    }
}

/// Where a cache's values keep their bytes, which decides how its cost counts to the owning app's
/// footprint.
public enum PayloadLocation: Hashable, Sendable {
    /// In the owning app's ``AppHeap``: already counted in the heap's arena bytes.
    case appHeap
    /// Anywhere else (the process's shared arenas): counted by the entries' declared cost.
    case elsewhere
}

/// A cache that can be purged without running its owner's code, as a suspended app's must be.
protocol QuietlyPurgeable {
    /// Purges for `event` without calling back into the owner.
    func purgeQuietly(for event: PurgeEvent) -> CachePurgeResult
}
