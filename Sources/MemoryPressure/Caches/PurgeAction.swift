/// What a cache does on one purge event: keep everything, trim to a fraction, or empty itself.
public struct PurgeAction: Hashable, Sendable, CustomStringConvertible {
    /// The fraction of the cache's cost and count that survives, from 0 (empty) through 1 (keep).
    public let retainedFraction: Double

    private init(retainedFraction: Double) {
        self.retainedFraction = retainedFraction
    }

    /// Leave the cache as it is.
    public static let keep = PurgeAction(retainedFraction: 1)

    /// Remove every entry (except discardable content being accessed).
    public static let empty = PurgeAction(retainedFraction: 0)

    /// Keep the most recently used entries up to `fraction` of the cost and of the count.
    public static func trim(toFraction fraction: Double) throws(MemoryPressureError) -> PurgeAction {
        guard (0...1).contains(fraction) else { throw .fractionOutOfRange(fraction) }
        return PurgeAction(retainedFraction: fraction)
    }

    public var description: String {
        switch retainedFraction {
        case 1: "keep"
        case 0: "empty"
        default: "trim to \(retainedFraction)"
        }
    }
}
