/// The name an app is registered under: also the name of its state-archive directory, so it is
/// checked to be a safe single path component.
public struct AppIdentifier: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The identifier's text.
    public let rawValue: String

    /// The longest identifier accepted, in UTF-8 bytes (the usual file-name limit).
    public static let maximumByteCount = 255

    /// Validates `rawValue`: between 1 and 255 UTF-8 bytes, no `/` or `\`, not `.` or `..`, no
    /// control characters, and not the text of ``service``, which is reserved.
    ///
    /// - Parameter rawValue: The identifier's text.
    /// - Throws: ``MemoryPressureError`` with ``MemoryPressureError/Code/invalidIdentifier`` when the
    ///   text is not a safe single path component.
    public init(_ rawValue: String) throws(MemoryPressureError) {
        if rawValue.isEmpty {
            throw .invalidIdentifier(rawValue, reason: "is empty")
        }
        if rawValue.utf8.count > Self.maximumByteCount {
            throw .invalidIdentifier(rawValue, reason: "is \(rawValue.utf8.count) bytes long")
        }
        if rawValue == "." || rawValue == ".." {
            throw .invalidIdentifier(rawValue, reason: "is a relative path component")
        }
        // Scalars, not Characters: a separator followed by a combining mark is one Character
        // ("/\u{301}") that is not "/", yet still puts a "/" in the path.
        if rawValue.unicodeScalars.contains(where: { $0 == "/" || $0 == "\\" }) {
            throw .invalidIdentifier(rawValue, reason: "contains a path separator")
        }
        if rawValue.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .invalidIdentifier(rawValue, reason: "contains a control character")
        }
        if rawValue == Self.service.rawValue {
            throw .reservedIdentifier(rawValue)
        }
        self.rawValue = rawValue
    }

    /// Decodes an identifier from its text, validated as ``init(_:)`` validates it.
    ///
    /// - Parameter decoder: The decoder, holding a single string.
    /// - Throws: The decoder's error when the value is not a string, or ``MemoryPressureError``
    ///   with ``MemoryPressureError/Code/invalidIdentifier`` when the text is not a valid identifier.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(text)
    }

    /// Encodes the identifier as its text.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's error.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The owner of a service's own caches and stores, which are not any hosted app's: they are
    /// purged per their category at every raised level. No app can be registered under it.
    public static let service = AppIdentifier(reserved: "(service)")

    private init(reserved rawValue: String) {
        self.rawValue = rawValue
    }

    /// Orders identifiers by their text.
    ///
    /// - Parameters:
    ///   - lhs: An identifier.
    ///   - rhs: Another identifier.
    /// - Returns: Whether `lhs`'s text sorts before `rhs`'s.
    public static func < (lhs: AppIdentifier, rhs: AppIdentifier) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The identifier's text.
    public var description: String { rawValue }
}
