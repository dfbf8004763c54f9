/// A number of bytes, written for people: `1.5 GiB`, `512 MiB`, `4 KiB`, `17 B`.
package struct ByteCount: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The exact number of bytes.
    package var bytes: Int

    /// A count of `bytes`.
    package init(_ bytes: Int) {
        self.bytes = bytes
    }

    /// Binary units, from bytes up; a value is shown in the largest unit it reaches.
    static let units: [(symbol: String, scale: Int)] = [
        ("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10),
    ]

    /// The count in the largest binary unit it reaches, with up to one decimal.
    package var description: String {
        let magnitude = bytes.magnitude
        guard let unit = Self.units.first(where: { magnitude >= UInt($0.scale) }) else {
            return "\(bytes) B"
        }
        let tenths = Int((Double(magnitude) / Double(unit.scale) * 10).rounded())
        let sign = bytes < 0 ? "-" : ""
        let text = tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
        return "\(sign)\(text) \(unit.symbol)"
    }

    package static func < (lhs: ByteCount, rhs: ByteCount) -> Bool {
        lhs.bytes < rhs.bytes
    }
}

extension ByteCount {
    /// The accepted form, as error messages state it.
    static let parsingForm = "a whole number of bytes (optionally with B), or a number with a unit K/KiB, M/MiB, "
        + "G/GiB, T/TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000), such as 512MiB, 2GiB, 1.5G or 800000000"

    /// Parses a size such as `512MiB`, `2GiB`, `1.5G`, `64k` or `800000000`.
    ///
    /// `K`, `M`, `G`, `T` and `KiB`, `MiB`, `GiB`, `TiB` are powers of 1024 (as in systemd and the
    /// cgroup tools); `KB`, `MB`, `GB`, `TB` are powers of 1000. Units are case-insensitive and may be
    /// separated from the number by a space. A fraction of a unit is rounded down to whole bytes,
    /// exactly; a fraction of a byte (`1.9`, `1.9B`) is an error, since it is most likely a unit left
    /// out. A leading `-` is accepted so that callers can reject negative sizes with their own message.
    package init(parsing text: String) throws(MemoryPressureError) {
        let failure = MemoryPressureError.unparsable(quantity: "size", text: text, expected: Self.parsingForm)
        var rest = Substring(text).trimmingPrefixAndSuffixWhitespace()
        let negative = rest.first == "-"
        if negative { rest = rest.dropFirst() }
        let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unit = rest.dropFirst(number.count).trimmingPrefixAndSuffixWhitespace()
        guard let scale = Self.scale(ofUnit: unit.lowercased()),
              let magnitude = Self.bytes(number, scale: scale)
        else { throw failure }
        let fraction = number.drop { $0 != "." }.dropFirst()
        if scale == 1, fraction.contains(where: { $0 != "0" }) {
            throw .unparsable(quantity: "size", text: text, problem: "is not a whole number of bytes", expected: Self.parsingForm)
        }
        self.init(negative ? -magnitude : magnitude)
    }

    private static func scale(ofUnit unit: String) -> Int? {
        switch unit {
        case "", "b": 1
        case "k", "kib": 1 << 10
        case "m", "mib": 1 << 20
        case "g", "gib": 1 << 30
        case "t", "tib": 1 << 40
        case "kb": 1_000
        case "mb": 1_000_000
        case "gb": 1_000_000_000
        case "tb": 1_000_000_000_000
        default: nil
        }
    }

    /// `number` (digits, optionally a `.` and more digits) times `scale`, or nil when malformed or
    /// too large for an `Int`.
    private static func bytes(_ number: Substring, scale: Int) -> Int? {
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, let wholeValue = Int(whole) else { return nil }
        let (scaled, overflow) = wholeValue.multipliedReportingOverflow(by: scale)
        guard !overflow else { return nil }
        guard parts.count == 2 else { return scaled }
        guard !parts[1].isEmpty, parts[1].allSatisfy(\.isNumber) else { return nil }
        // floor(0.d1d2…dn × scale), exactly: from the last digit, carry floor((d × scale + carry) / 10).
        // Each carry stays below `scale`, and nested floors of tenths equal the floor of the whole.
        let fractionBytes = parts[1].reversed().reduce(0) { carry, digit in
            ((digit.wholeNumberValue ?? 0) * scale + carry) / 10
        }
        let (total, overflowSum) = scaled.addingReportingOverflow(fractionBytes)
        return overflowSum ? nil : total
    }
}

extension Substring {
    func trimmingPrefixAndSuffixWhitespace() -> Substring {
        drop(while: \.isWhitespace).trimmingSuffix(while: \.isWhitespace)
    }
}

extension Int {
    /// The sum, or `Int.max` (`Int.min`) where it would overflow: for sums of byte counts and
    /// declared costs, each of which may be as large as `Int.max`.
    @inlinable
    package func addingClamped(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
