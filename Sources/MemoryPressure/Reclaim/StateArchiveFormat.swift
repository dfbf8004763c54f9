/// The layout of a state file: a 24-byte header (the magic `MPSA`, a version byte, three zero
/// bytes, the state's length and its FNV-1a 64-bit checksum, both little-endian), then the state.
enum StateArchiveFormat {
    static let magic: [UInt8] = Array("MPSA".utf8)
    static let version: UInt8 = 1
    static let headerSize = 24

    /// Why stored bytes are not a valid state file.
    struct Damage: Error {
        let reason: String
    }

    static func encode(_ state: [UInt8]) -> [UInt8] {
        var contents = magic + [version, 0, 0, 0]
        contents.reserveCapacity(headerSize + state.count)
        append(UInt64(state.count), to: &contents)
        append(checksum(state), to: &contents)
        contents += state
        return contents
    }

    static func decode(_ contents: [UInt8]) throws(Damage) -> [UInt8] {
        guard contents.count >= headerSize else {
            throw Damage(reason: "\(contents.count) bytes is shorter than the \(headerSize)-byte header")
        }
        guard Array(contents[0..<4]) == magic else { throw Damage(reason: "the header's magic is not MPSA") }
        guard contents[4] == version else { throw Damage(reason: "unknown version \(contents[4]); expected \(version)") }
        let length = readUInt64(contents, at: 8)
        let state = Array(contents[headerSize...])
        guard length == UInt64(state.count) else {
            throw Damage(reason: "the header gives \(length) bytes of state but \(state.count) follow")
        }
        guard readUInt64(contents, at: 16) == checksum(state) else {
            throw Damage(reason: "the checksum does not match the state")
        }
        return state
    }

    /// FNV-1a, 64 bits.
    static func checksum(_ bytes: [UInt8]) -> UInt64 {
        bytes.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    private static func readUInt64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << UInt64($1 * 8) }
    }
}
