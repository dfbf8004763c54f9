/// Text that is not a valid size or duration, with the form that is accepted.
public struct UnitParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was being parsed: `size` or `duration`.
    public let quantity: String
    /// The text as given.
    public let text: String
    /// The accepted form, in words with examples.
    public let expected: String

    /// An error for `text`, which was meant to be a `quantity` of the `expected` form.
    public init(quantity: String, text: String, expected: String) {
        self.quantity = quantity
        self.text = text
        self.expected = expected
    }

    public var description: String {
        "\(quantity) \(text.debugDescription) is not valid; expected \(expected)"
    }
}
