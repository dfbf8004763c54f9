extension StringProtocol {
    /// The text as it may be printed on a terminal or in a log line: every scalar that could move
    /// the cursor, change colours, break the line, reorder the text after it or hide it is written
    /// as `\u{…}`, as Swift writes it in a string literal. Those are the control characters (C0,
    /// DEL, C1: escape sequences start with them), the format characters (bidirectional marks,
    /// embeddings, overrides and isolates, U+200E, U+202A–U+202E, U+2066–U+2069; zero-width spaces,
    /// the byte order mark, tag characters), and the line and paragraph separators. Zero-width
    /// joiners and non-joiners (U+200C, U+200D), which scripts and emoji need, are kept.
    ///
    /// Longer than `limit` scalars, it is cut there and ends in `…`.
    package func escapedForTerminal(limit: Int = .max) -> String {
        var shown = ""
        for (index, scalar) in unicodeScalars.enumerated() {
            guard index < limit else { return shown + "…" }
            if scalar.needsEscapeOnATerminal {
                shown += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// The text quoted for an error message: as Swift writes a string literal (`debugDescription`)
    /// with the escapes of ``escapedForTerminal(limit:)``. Longer than `limit` scalars, its first
    /// `limit` are shown, then `…` and its full length: `"xxxx"… (1048576 bytes)`.
    package func echoed(limit: Int = 80) -> String {
        let scalars = unicodeScalars
        let shown = String(String.UnicodeScalarView(scalars.prefix(limit))).debugDescription.escapedForTerminal()
        return scalars.dropFirst(limit).isEmpty ? shown : "\(shown)… (\(utf8.count) bytes)"
    }
}

extension Unicode.Scalar {
    /// Whether ``StringProtocol/escapedForTerminal(limit:)`` writes the scalar as `\u{…}`.
    fileprivate var needsEscapeOnATerminal: Bool {
        switch properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: true
        case .format: self != "\u{200C}" && self != "\u{200D}"
        default: false
        }
    }
}
