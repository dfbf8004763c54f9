import NIOCore

/// Renders the page for an identifier: a table of rows derived from it, `byteCount` bytes long.
/// The same identifier always renders the same bytes, so a cached page can be dropped and rendered
/// again.
struct PageRenderer: Sendable {
    /// The size of every page, in bytes.
    let byteCount: Int

    func render(_ identifier: String) -> ByteBuffer {
        var page = ByteBuffer()
        page.reserveCapacity(byteCount)
        page.writeString("<!doctype html><title>Page \(identifier)</title><table>\n")
        // FNV-1a of the identifier seeds the rows.
        var state = identifier.utf8.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 } | 1
        var row = 0
        while page.readableBytes < byteCount - 64 {
            // xorshift: cheap, deterministic rows.
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            page.writeString("<tr><td>\(row)</td><td>\(String(state, radix: 16))</td></tr>\n")
            row += 1
        }
        page.writeString("</table>\n")
        return page
    }
}
