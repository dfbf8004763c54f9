/// Whether `text` holds no character that could act on a terminal it is printed on: no control
/// character (C0, DEL, C1), no format character (bidirectional marks, embeddings, overrides and
/// isolates, zero-width spaces; zero-width joiners and non-joiners are allowed), no line or
/// paragraph separator. What issue 18 asks of everything the tool prints from its input.
public func printsSafelyOnATerminal(_ text: String) -> Bool {
    !text.unicodeScalars.contains { scalar in
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: true
        case .format: scalar != "\u{200C}" && scalar != "\u{200D}"
        default: false
        }
    }
}
