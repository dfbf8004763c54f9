#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A pseudo-random generator of its own (xoshiro256**, seeded through SplitMix64), so that the same
/// seed gives the same sequence of numbers on every machine and every Swift release: the standard
/// library's `random(in:using:)` algorithms are not promised to stay the same, so the draws the
/// simulation makes are defined here too (``uniform(in:)-(ClosedRange<Int>)``, ``unitInterval()``).
package struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    /// A generator whose sequence is fixed by `seed`.
    package init(seed: UInt64) {
        var mixer = SplitMix64(state: seed)
        state = (mixer.next(), mixer.next(), mixer.next(), mixer.next())
    }

    /// A generator for one part of a simulation (an app, a launch), independent of the others but
    /// fixed by `seed` and `stream`.
    package init(seed: UInt64, stream: UInt64) {
        var mixer = SplitMix64(state: seed ^ (stream &* 0x9E37_79B9_7F4A_7C15))
        self.init(seed: mixer.next())
    }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        let result = rotateLeft(state.1 &* 5, by: 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotateLeft(state.3, by: 45)
        return result
    }

    /// A number in `0 ..< 1` with 53 random bits.
    package mutating func unitInterval() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// An integer in `range`, without modulo bias (Lemire's multiply-and-reject).
    package mutating func uniform(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(bitPattern: Int64(range.upperBound &- range.lowerBound)) &+ 1
        guard span != 0 else { return Int(truncatingIfNeeded: next()) }
        var product = next().multipliedFullWidth(by: span)
        if product.low < span {
            let threshold = (0 &- span) % span
            while product.low < threshold {
                product = next().multipliedFullWidth(by: span)
            }
        }
        return range.lowerBound &+ Int(truncatingIfNeeded: product.high)
    }

    /// A number in `range`, uniformly.
    package mutating func uniform(in range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * unitInterval()
    }

    /// An exponentially distributed number with the given mean: the gap between events of a
    /// process that happens at a steady rate.
    package mutating func exponential(mean: Double) -> Double {
        -mean * (1 - unitInterval()).logarithm
    }

    /// An index into `weights`, each chosen in proportion to its weight; nil when no weight is
    /// positive.
    package mutating func weightedIndex(_ weights: [Double]) -> Int? {
        let total = weights.reduce(0) { $0 + max($1, 0) }
        guard total > 0 else { return nil }
        var remaining = unitInterval() * total
        for (index, weight) in weights.enumerated() where weight > 0 {
            if remaining < weight { return index }
            remaining -= weight
        }
        return weights.lastIndex { $0 > 0 }
    }

    private func rotateLeft(_ value: UInt64, by count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }
}

/// SplitMix64: spreads a seed over the generator's state, as xoshiro's authors advise.
private struct SplitMix64 {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

extension Double {
    /// The natural logarithm, without Foundation.
    fileprivate var logarithm: Double { log(self) }
}
