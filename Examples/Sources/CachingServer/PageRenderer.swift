/// Renders the page for an identifier: a table of rows derived from it, exactly `byteCount` bytes
/// long. The same identifier always renders the same bytes, so a cached page can be dropped and
/// rendered again.
///
/// A page is rendered a piece at a time (``Cursor``), into whatever buffers the caller has: the
/// whole page into one buffer in the service's heap, or chunk by chunk into a response, so that a
/// page served uncached never needs all its bytes at once.
struct PageRenderer: Sendable {
    /// The size of every page, in bytes.
    let byteCount: Int

    /// The page for `identifier`, from its first byte.
    func page(_ identifier: String) -> Cursor {
        Cursor(identifier: identifier, byteCount: byteCount)
    }

    /// Where the rendering of one page stands.
    ///
    /// The page is a header, rows while a row and the footer still fit, spaces up to the footer, and
    /// the footer; cut at `byteCount` when the header and the footer alone do not fit.
    struct Cursor {
        /// The bytes of the page not rendered yet.
        private(set) var remainingBytes: Int
        /// The bytes of the page after the current piece.
        private var bytesAfterPiece: Int
        /// The row generator's state, seeded from the identifier.
        private var state: UInt64
        private var row = 0
        /// The part of the page the next piece comes from.
        private var stage = Stage.header
        /// The piece being copied out (the header, a row, the padding or the footer).
        private var piece: [UInt8] = []
        private var pieceOffset = 0
        private let identifier: String

        private enum Stage {
            case header, rows, footer, done
        }

        private static let footer = Array("</table>\n".utf8)
        /// The longest row: two cells, a decimal row number and 16 hexadecimal digits.
        private static let longestRow = 8 + 20 + 9 + 16 + 11

        init(identifier: String, byteCount: Int) {
            self.identifier = identifier
            remainingBytes = byteCount
            bytesAfterPiece = byteCount
            // FNV-1a of the identifier seeds the rows.
            state = identifier.utf8.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 } | 1
            piece.reserveCapacity(Self.longestRow)
        }

        /// Renders the next bytes of the page into `buffer`, as many as fit.
        ///
        /// - Returns: The number of bytes rendered: `buffer.count`, or fewer at the end of the page.
        mutating func render(into buffer: UnsafeMutableRawBufferPointer) -> Int {
            var written = 0
            while written < buffer.count && remainingBytes > 0 {
                if pieceOffset == piece.count { nextPiece() }
                let count = min(piece.count - pieceOffset, buffer.count - written, remainingBytes)
                piece.withUnsafeBytes { piece in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[written..<(written + count)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: piece[pieceOffset..<(pieceOffset + count)]))
                }
                pieceOffset += count
                written += count
                remainingBytes -= count
            }
            return written
        }

        /// Makes the next piece of the page current.
        private mutating func nextPiece() {
            piece.removeAll(keepingCapacity: true)
            pieceOffset = 0
            switch stage {
            case .header:
                piece.append(contentsOf: "<!doctype html><title>Page ".utf8)
                // Only the characters that need no escaping, and not too many of them.
                piece.append(contentsOf: identifier.utf8.lazy.filter(Self.isPlain).prefix(64))
                piece.append(contentsOf: "</title><table>\n".utf8)
                stage = .rows
            case .rows where bytesAfterPiece >= Self.longestRow + Self.footer.count:
                // xorshift: cheap, deterministic rows.
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                piece.append(contentsOf: "<tr><td>".utf8)
                Self.append(UInt64(row), radix: 10, to: &piece)
                piece.append(contentsOf: "</td><td>".utf8)
                Self.append(state, radix: 16, to: &piece)
                piece.append(contentsOf: "</td></tr>\n".utf8)
                row += 1
            case .rows:
                // Spaces, so that the footer ends the page exactly.
                piece.append(contentsOf: repeatElement(UInt8(ascii: " "), count: max(0, bytesAfterPiece - Self.footer.count)))
                stage = .footer
            case .footer, .done:
                piece.append(contentsOf: Self.footer)
                stage = .done
            }
            bytesAfterPiece -= piece.count
        }

        private static func isPlain(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."): true
            default: false
            }
        }

        /// Appends `value`'s digits in `radix` (10 or 16), without making a string.
        private static func append(_ value: UInt64, radix: UInt64, to bytes: inout [UInt8]) {
            let start = bytes.count
            var value = value
            repeat {
                let digit = UInt8(value % radix)
                bytes.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
                value /= radix
            } while value > 0
            bytes[start...].reverse()
        }
    }
}
