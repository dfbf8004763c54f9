import PropertyBased
import Synchronization
import Testing

/// Generators of the bad (and good) input thrown at the parsers.
enum BadInput {
    /// Pieces that sizes, durations and kernel files are made of, and pieces that break them:
    /// digits, signs, separators, every unit spelling, exponents, path and control characters,
    /// non-ASCII look-alikes.
    static let tokens: [String] = [
        "0", "1", "2", "5", "7", "9", "10", "99", "512", "4096", "9223372036854775807", "18446744073709551616",
        ".", "..", "-", "+", " ", "  ", "\t", "\n", "=",
        "b", "B", "k", "K", "kb", "KiB", "m", "M", "MB", "MiB", "g", "G", "GB", "GiB", "t", "T", "TB", "TiB",
        "ns", "us", "µs", "ms", "s", "min", "h", "d", "e", "E", "e9", "x", "nan", "inf", "max",
        "some", "full", "avg10=", "avg60=", "avg300=", "total=", "low", "high", "oom", "oom_kill",
        "/", "\\", "\0", "\u{7F}", "é", "٣", "５", "😀", "\u{200B}", "\u{301}",
    ]

    /// Strings of 0 to 12 tokens: near misses of every accepted form, and many accepted ones.
    static let tokenString = Gen.int(in: 0...(tokens.count - 1)).array(of: 0...12).map { indices in
        indices.map { tokens[$0] }.joined()
    }

    /// Strings of 0 to 40 arbitrary Unicode scalars (surrogate code points, which are not scalars,
    /// become U+FFFD).
    static let unicodeString = Gen<UInt32>.value(in: 0...0x10FFFF).array(of: 0...40).map { values in
        var text = String.UnicodeScalarView()
        text.append(contentsOf: values.map { Unicode.Scalar($0) ?? "\u{FFFD}" })
        return String(text)
    }

    /// Strings of 0 to 300 ASCII characters, control characters included: long enough to cross
    /// every length limit.
    static let asciiString = Gen<UInt8>.value(in: 0...127).array(of: 0...300).map { bytes in
        String(decoding: bytes, as: UTF8.self)
    }

    /// Doubles from every region: NaN, the infinities, zero of both signs, tiny, around 0 to 1,
    /// huge.
    static let double = zip(
        Gen.int(in: 0...3), Gen.int(in: 0...5), Gen.double(in: -2...2), Gen.double(in: -1e300...1e300)
    ).map { region, special, small, huge -> Double in
        switch region {
        case 0: [Double.nan, .infinity, -.infinity, 0, -0.0, .leastNonzeroMagnitude][special]
        case 1, 2: small
        default: huge
        }
    }

    /// Integers from every region: the extremes, around zero, and anywhere.
    static let integer = zip(Gen.int(in: 0...2), Gen.int(in: -3...3), Gen.int()).map { region, near, any -> Int in
        switch region {
        case 0: [Int.min, Int.max, Int.min + 1, Int.max - 1, 1 << 62, -(1 << 62), 1 << 40][abs(near)]
        case 1: near
        default: any
        }
    }

    /// Durations from -2 h to 2 h at nanosecond grain, and the extremes.
    static let duration = zip(Gen.int(in: 0...4), Gen<Int64>.value(in: -7_200_000_000_000...7_200_000_000_000))
        .map { region, nanoseconds -> Duration in
            switch region {
            case 0: Duration(secondsComponent: .max, attosecondsComponent: 0)
            case 1: Duration(secondsComponent: .min, attosecondsComponent: 0)
            default: .nanoseconds(nanoseconds)
            }
        }
}

extension BadInput {
    /// Calls `body` with `count` strings of each generator of text (tokens, Unicode, ASCII); returns
    /// how many it tried.
    static func eachText(count: Int, _ body: (String) throws -> Void) async -> Int {
        let tally = InputTally()
        await propertyCheck(count: count, input: tokenString) { text in
            tally.record()
            try body(text)
        }
        await propertyCheck(count: count, input: unicodeString) { text in
            tally.record()
            try body(text)
        }
        await propertyCheck(count: count, input: asciiString) { text in
            tally.record()
            try body(text)
        }
        return tally.total
    }
}

/// Counts the inputs a property check tried, so a test can prove how many it ran.
final class InputTally: Sendable {
    private let count = Atomic<Int>(0)

    func record() {
        count.add(1, ordering: .relaxed)
    }

    var total: Int { count.load(ordering: .relaxed) }
}
