/// A memory system that could not be made or could not take an app.
public struct MemorySystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Problem: Hashable, Sendable {
        /// The target ratio is not between zero and the warning threshold's ratio.
        case targetOutOfRange(ratio: Double, warningRatio: Double)
        /// An app with this identifier is already registered.
        case duplicateApp(AppIdentifier)
        /// The state archive's directory cannot be used.
        case stateArchive(StateArchiveError)
    }

    /// What went wrong.
    public let problem: Problem

    /// An error for `problem`.
    public init(_ problem: Problem) {
        self.problem = problem
    }

    public var description: String {
        switch problem {
        case .targetOutOfRange(let ratio, let warning):
            "reclamation target ratio \(ratio) is out of range; expected more than 0 and less than the warning threshold's \(warning)"
        case .duplicateApp(let app):
            "an app named \(app) is already registered; expected a unique identifier per app"
        case .stateArchive(let error):
            error.description
        }
    }
}
