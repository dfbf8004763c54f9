/// A simulation that could not run.
public struct SimulationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, in one line.
    public let message: String

    /// An error saying `message`.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
