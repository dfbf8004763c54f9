/// A cache, heap or store was given a value outside the range it accepts.
public enum CacheError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A limit was zero or negative; limits are at least 1 (leave one out for no limit).
    case nonPositiveLimit(name: String, value: Int)
    /// A count limit was larger than a cache can hold (``PurgeableCache/maximumCount``).
    case countLimitTooLarge(Int, maximum: Int)
    /// An entry's cost was negative; costs are 0 or more.
    case negativeCost(Int)
    /// A fraction to keep was outside 0 through 1 (or not a number).
    case fractionOutOfRange(Double)
    /// A backing store's dimension was zero or negative, or its size overflowed.
    case invalidDimensions(width: Int, height: Int, bytesPerPixel: Int)
    /// A heap threshold was zero or negative; thresholds are at least 1 byte.
    case nonPositiveThreshold(Int)

    public var description: String {
        switch self {
        case .nonPositiveLimit(let name, let value):
            "cache \(name) limit \(value) is not positive; expected 1 or more, or no limit"
        case .countLimitTooLarge(let limit, let maximum):
            "cache count limit \(limit) is larger than a cache holds; expected 1 through \(maximum), or no limit"
        case .negativeCost(let cost):
            "cache entry cost \(cost) is negative; expected 0 or more"
        case .fractionOutOfRange(let fraction):
            "fraction \(fraction) is out of range; expected 0 through 1"
        case .invalidDimensions(let width, let height, let bytesPerPixel):
            "backing store of \(width) x \(height) x \(bytesPerPixel) bytes per pixel is invalid; "
                + "expected each at least 1 and a total that fits in Int"
        case .nonPositiveThreshold(let bytes):
            "heap threshold \(bytes) bytes is not positive; expected 1 or more"
        }
    }
}
