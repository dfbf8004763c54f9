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
