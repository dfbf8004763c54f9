// The errors of sizes, durations and app identifiers given as text.
// The factories sit beside the code that throws them.
extension MemoryPressureError {
    /// `text`, meant to be a `quantity` (`size` or `duration`) of the `expected` form, is not:
    /// `problem` says why. The text is echoed escaped and cut (``StringProtocol/echoed(limit:)``).
    static func unparsable(quantity: String, text: String, problem: String = "is not valid", expected: String) -> Self {
        Self(.unparsableValue, "\(quantity) \(text.echoed()) \(problem); expected \(expected)")
    }

    /// An app identifier that was rejected; `reason` says what is wrong: `is empty`, `contains a
    /// path separator`, ….
    static func invalidIdentifier(_ identifier: String, reason: String) -> Self {
        let shown = identifier.unicodeScalars.count > 40
            ? String(String.UnicodeScalarView(identifier.unicodeScalars.prefix(40))).debugDescription + "…"
            : identifier.debugDescription
        return Self(
            .invalidIdentifier,
            "app identifier \(shown) \(reason); expected 1 to \(AppIdentifier.maximumByteCount) UTF-8 bytes, "
                + "without '/', '\\\\' or control characters, and not '.' or '..'"
        )
    }

    /// The reserved identifier of a service's own caches, given where an app's is expected.
    package static func reservedIdentifier(_ identifier: String) -> Self {
        Self(
            .invalidIdentifier,
            "app identifier \(identifier.debugDescription) is reserved for a service's own caches (AppIdentifier.service); "
                + "expected any other name"
        )
    }
}
