/// The encodings of the client channel's text fields: percent-encoding for names and details,
/// base64 for saved state. The wire format depends on nothing but the standard library, as the
/// client does.
package enum WireText {
    /// `text` with every byte outside `A-Z a-z 0-9 - . _ ~ : /` written `%XX` (UTF-8, upper-case hex).
    package static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            if isUnreserved(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + String(hexDigits[Int(byte >> 4)]) + String(hexDigits[Int(byte & 0xF)])
            }
        }
        return encoded
    }

    /// The text `bytes` percent-encode; nil when a `%` is not followed by two hex digits, or the
    /// bytes are not UTF-8.
    package static func percentDecoded(_ bytes: some Collection<UInt8>) -> String? {
        var decoded: [UInt8] = []
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            guard byte == UInt8(ascii: "%") else {
                decoded.append(byte)
                continue
            }
            guard index != bytes.endIndex, let high = hexValue(bytes[index]) else { return nil }
            index = bytes.index(after: index)
            guard index != bytes.endIndex, let low = hexValue(bytes[index]) else { return nil }
            index = bytes.index(after: index)
            decoded.append(high << 4 | low)
        }
        return String(validating: decoded, as: UTF8.self)
    }

    /// `bytes` in base64 (RFC 4648, with padding).
    package static func base64(_ bytes: [UInt8]) -> String {
        var encoded: [UInt8] = []
        encoded.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<4 {
                encoded.append(position <= chunk.count ? base64Alphabet[Int(value >> (18 - 6 * UInt32(position)) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// The bytes base64 `text` encodes; nil when it is not base64 with padding.
    package static func decodingBase64(_ text: some Collection<UInt8>) -> [UInt8]? {
        let characters = Array(text)
        guard characters.count % 4 == 0 else { return nil }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(characters.count / 4 * 3)
        for start in stride(from: 0, to: characters.count, by: 4) {
            let group = characters[start..<(start + 4)]
            let padding = group.reversed().prefix { $0 == UInt8(ascii: "=") }.count
            // Padding ends the last group only, and leaves at least two characters.
            guard padding <= 2, padding == 0 || start + 4 == characters.count else { return nil }
            var value: UInt32 = 0
            for (offset, character) in group.enumerated() {
                var sextet: UInt8 = 0
                if offset < 4 - padding {
                    guard let decodedSextet = base64Value(character) else { return nil }
                    sextet = decodedSextet
                }
                value = value << 6 | UInt32(sextet)
            }
            decoded += [UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)].prefix(3 - padding)
        }
        return decoded
    }

    private static let hexDigits = Array("0123456789ABCDEF")
    private static let base64Alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    private static func base64Value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
