import MemoryPressureRuntime
/// What a cache holds, which decides what it gives back on each purge event.
///
/// The built-in categories follow the image-loading libraries: images and media are emptied on
/// entering the background and on a warning; rebuildable objects are trimmed to 10% on entering the
/// background and emptied on a warning. Every category is emptied at critical pressure unless a
/// custom one says otherwise.
public struct CacheCategory: Hashable, Sendable, CustomStringConvertible {
    /// The category's name, for reports.
    public let name: String
    /// What to do when the owning app enters the background.
    package let onEnteringBackground: PurgeAction
    /// What to do at the warning level.
    package let onWarning: PurgeAction
    /// What to do at the critical level.
    package let onCritical: PurgeAction

    /// Decoded images: emptied on entering the background, on a warning and at critical.
    public static let images = CacheCategory(
        name: "images", onEnteringBackground: .empty, onWarning: .empty, onCritical: .empty
    )

    /// Decoded media (audio, video frames): emptied on every event.
    public static let media = CacheCategory(
        name: "media", onEnteringBackground: .empty, onWarning: .empty, onCritical: .empty
    )

    /// Objects that can be rebuilt from elsewhere: trimmed to 10% on entering the background,
    /// emptied on a warning and at critical.
    public static let rebuildableObjects = CacheCategory(
        name: "rebuildable objects",
        onEnteringBackground: backgroundTrim,
        onWarning: .empty,
        onCritical: .empty
    )

    private static let backgroundTrim: PurgeAction = {
        do { return try .trim(toFraction: 0.1) } catch { preconditionFailure("\(error)") }
    }()

    /// A category of the caller's own.
    ///
    /// - Parameters:
    ///   - name: The name reports and logs give.
    ///   - onEnteringBackground: What to do when the owning app enters the background.
    ///   - onWarning: What to do at the warning level.
    ///   - onCritical: What to do at the critical level; ``PurgeAction/empty`` by default.
    /// - Returns: The category.
    public static func custom(
        name: String,
        onEnteringBackground: PurgeAction,
        onWarning: PurgeAction,
        onCritical: PurgeAction = .empty
    ) -> CacheCategory {
        CacheCategory(
            name: name, onEnteringBackground: onEnteringBackground, onWarning: onWarning, onCritical: onCritical
        )
    }

    private init(name: String, onEnteringBackground: PurgeAction, onWarning: PurgeAction, onCritical: PurgeAction) {
        self.name = name
        self.onEnteringBackground = onEnteringBackground
        self.onWarning = onWarning
        self.onCritical = onCritical
    }

    /// The action for `event`.
    package func action(for event: PurgeEvent) -> PurgeAction {
        switch event {
        case .enteringBackground: onEnteringBackground
        case .warning: onWarning
        case .critical: onCritical
        }
    }

    /// The category's name.
    public var description: String { name }
}

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
    ///
    /// - Parameter fraction: The fraction that survives, from 0 (empty) through 1 (keep).
    /// - Returns: The action.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidArgument`` when
    ///   `fraction` is outside 0 through 1 (or not a number).
    public static func trim(toFraction fraction: Double) throws(MemoryPressureError) -> PurgeAction {
        guard (0...1).contains(fraction) else { throw .fractionOutOfRange(fraction) }
        return PurgeAction(retainedFraction: fraction)
    }

    /// The action in words: `keep`, `empty` or `trim to 0.1`.
    public var description: String {
        switch retainedFraction {
        case 1: "keep"
        case 0: "empty"
        default: "trim to \(retainedFraction)"
        }
    }
}
