/// The name an app is registered under: also the name of its state-archive directory, so it is
/// checked to be a safe single path component.
public struct AppIdentifier: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The identifier's text.
    public let rawValue: String

    /// The longest identifier accepted, in UTF-8 bytes (the usual file-name limit).
    public static let maximumByteCount = 255

    /// Validates `rawValue`: between 1 and 255 UTF-8 bytes, no `/` or `\`, not `.` or `..`, no
    /// control characters.
    public init(_ rawValue: String) throws(AppIdentifierError) {
        if rawValue.isEmpty {
            throw AppIdentifierError(identifier: rawValue, problem: .empty)
        }
        if rawValue.utf8.count > Self.maximumByteCount {
            throw AppIdentifierError(identifier: rawValue, problem: .tooLong(byteCount: rawValue.utf8.count))
        }
        if rawValue == "." || rawValue == ".." {
            throw AppIdentifierError(identifier: rawValue, problem: .relativePath)
        }
        // Scalars, not Characters: a separator followed by a combining mark is one Character
        // ("/\u{301}") that is not "/", yet still puts a "/" in the path.
        if rawValue.unicodeScalars.contains(where: { $0 == "/" || $0 == "\\" }) {
            throw AppIdentifierError(identifier: rawValue, problem: .pathSeparator)
        }
        if rawValue.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw AppIdentifierError(identifier: rawValue, problem: .controlCharacter)
        }
        self.rawValue = rawValue
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(text)
    }

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

    public static func < (lhs: AppIdentifier, rhs: AppIdentifier) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    public var description: String { rawValue }
}

/// An app identifier that was rejected, with the reason and the accepted form.
public struct AppIdentifierError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the identifier.
    public enum Problem: Hashable, Sendable {
        case empty
        case tooLong(byteCount: Int)
        case relativePath
        case pathSeparator
        case controlCharacter
    }

    /// The identifier as given.
    public let identifier: String
    /// What is wrong with it.
    public let problem: Problem

    public var description: String {
        let shown = identifier.unicodeScalars.count > 40
            ? String(String.UnicodeScalarView(identifier.unicodeScalars.prefix(40))).debugDescription + "…"
            : identifier.debugDescription
        let reason = switch problem {
        case .empty: "is empty"
        case .tooLong(let count): "is \(count) bytes long"
        case .relativePath: "is a relative path component"
        case .pathSeparator: "contains a path separator"
        case .controlCharacter: "contains a control character"
        }
        return "app identifier \(shown) \(reason); expected 1 to \(AppIdentifier.maximumByteCount) UTF-8 bytes, "
            + "without '/', '\\\\' or control characters, and not '.' or '..'"
    }
}
