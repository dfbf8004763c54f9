import Jemalloc
import SystemPackage
import MemoryPressureRuntime

// The errors of caches, stores and heaps.
// The factories sit beside the code that throws them.
extension MemoryPressureError {
    /// A cache's `name` limit (cost or count) of zero or less; limits are at least 1 (leave one
    /// out for no limit).
    static func cacheLimitNotPositive(_ name: String, value: Int) -> Self {
        Self(.invalidConfiguration, "cache \(name) limit \(value) is not positive; expected 1 or more, or no limit")
    }

    /// A cost limit as a fraction of the budget outside (0, 1].
    static func cacheBudgetFractionOutOfRange(_ fraction: Double) -> Self {
        Self(.invalidConfiguration, "cache cost limit of \(fraction) of the budget is out of range; expected a fraction above 0 and at most 1, or no limit")
    }

    /// A count limit larger than a cache can hold.
    static func cacheCountLimitTooLarge(_ limit: Int, maximum: Int) -> Self {
        Self(
            .invalidConfiguration,
            "cache count limit \(limit) is larger than a cache holds; expected 1 through \(maximum), or no limit"
        )
    }

    /// A negative cost for a cache entry. (Thrown from the inlinable `PurgeableCache.setValue`.)
    @usableFromInline
    static func negativeCost(_ cost: Int) -> Self {
        Self(.invalidArgument, "cache entry cost \(cost) is negative; expected 0 or more")
    }

    /// A fraction to keep outside 0 through 1 (or not a number).
    static func fractionOutOfRange(_ fraction: Double) -> Self {
        Self(.invalidArgument, "fraction \(fraction) is out of range; expected 0 through 1")
    }

    /// A backing store's renderer read its own store, whose pixels it is drawing.
    static func renderReadsOwnStore(width: Int, height: Int) -> Self {
        Self(
            .reentrantCall,
            "the renderer of a \(width) x \(height) backing store read that store while drawing it; "
                + "a renderer draws into the bytes it is given and must not read its own store's pixels"
        )
    }

    /// A backing store's dimension of zero or less, or a size that overflows.
    static func invalidDimensions(width: Int, height: Int, bytesPerPixel: Int) -> Self {
        Self(
            .invalidArgument,
            "backing store of \(width) x \(height) x \(bytesPerPixel) bytes per pixel is invalid; "
                + "expected each at least 1 and a total that fits in Int"
        )
    }

    /// The heap of `app` was closed; it makes no new buffers.
    package static func heapClosed(_ app: AppIdentifier) -> Self {
        Self(.heapClosed, "the heap of app \(app) is closed; it makes no new buffers", app: app)
    }

    /// jemalloc refused an allocation in the heap of `app`.
    package static func allocationFailed(_ error: JemallocError, app: AppIdentifier) -> Self {
        Self(
            .allocationFailed,
            "\(error) (byte counts must be 1 or more)",
            app: app,
            errno: error.errno == 0 ? nil : Errno(rawValue: error.errno)
        )
    }

    /// jemalloc could not make a heap (an arena) for `app`.
    package static func heapUnavailable(_ error: JemallocError, app: AppIdentifier) -> Self {
        Self(
            .allocationFailed,
            "cannot make a heap for app \(app): \(error)",
            app: app,
            errno: error.errno == 0 ? nil : Errno(rawValue: error.errno)
        )
    }

    /// An allocation larger than any the process could make.
    static func allocationTooLarge(app: AppIdentifier, bytes: Int, maximum: Int) -> Self {
        Self(
            .invalidArgument,
            "app \(app): a heap allocation of \(bytes) bytes is larger than any the process can make; "
                + "expected 1 to \(maximum) bytes",
            app: app
        )
    }
}
