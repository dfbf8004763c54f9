import MemoryPressure

/// A scenario that cannot run, or a simulation that could not, in one line: where the problem is,
/// what it is, and what is accepted.
///
/// ```
/// scenario file trip.json: apps[2].profile "camera" is not a known profile; expected one of photos, music, maps, browser, utility or a name under "profiles"
/// --duration: "-5s" is negative; expected 1s to 1h
/// ```
///
/// What the user gave is echoed escaped and cut (`echoed(limit:)`), and the whole line is
/// ``escapedForTerminal(limit:)``, so no control or bidirectional character from a file or a
/// command line reaches the terminal.
///
/// Callers that act on the kind of problem compare ``code``; the message is for people.
package struct SimulationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem. More kinds may be added, so a `switch` over them needs a `default`.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Hashable, Sendable {
            case invalidScenario, unknownScenario, unreadableScenarioFile, alreadyRun, runFailed
        }

        private let kind: Kind

        private init(_ kind: Kind) {
            self.kind = kind
        }

        /// A scenario, a field of a scenario file or a setting is malformed or out of range.
        package static let invalidScenario = Code(.invalidScenario)
        /// A scenario named is neither built in nor a file.
        package static let unknownScenario = Code(.unknownScenario)
        /// A scenario file cannot be read, or is larger than ``ScenarioFile/maximumSize``.
        package static let unreadableScenarioFile = Code(.unreadableScenarioFile)
        /// The simulation has already run: each runs once.
        package static let alreadyRun = Code(.alreadyRun)
        /// The simulation could not set up or run its memory system or its apps.
        package static let runFailed = Code(.runFailed)

        /// The code's name: `invalidScenario`, `runFailed`, …
        package var description: String { kind.rawValue }
    }

    /// The kind of problem.
    package let code: Code
    /// Where the problem is from (`scenario file trip.json`, `--budget`), or nil for a run. The
    /// errors of a scenario file's fields are given theirs once the file is known.
    private var source: String?
    /// What is wrong, naming the field and the value given, and what is accepted.
    private let message: String

    /// An error of `code` saying `message`.
    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// An error in `field` (a path into a scenario file, such as `apps[2].profile`) of the scenario
    /// from `source`: `problem` names the value given, `expected` what is accepted.
    init(_ code: Code = .invalidScenario, source: String?, field: String? = nil, problem: String, expected: String) {
        self.code = code
        self.source = source
        self.message = (field.map { "\($0) " } ?? "") + "\(problem); expected \(expected)"
    }

    /// An error in `field` of the scenario from `source` that MemoryPressure's parser has put in
    /// words: the value given and what is accepted (`size "1.9" is not a whole number of bytes; expected …`).
    init(source: String?, field: String? = nil, cause: MemoryPressureError) {
        self.code = .invalidScenario
        self.source = source
        self.message = (field.map { "\($0) " } ?? "") + "\(cause)"
    }

    /// The error with its source: a scenario file's field errors are thrown while it is decoded, and
    /// given the file's name once they reach ``ScenarioFile/parse(_:source:defaultName:limits:)``.
    func from(_ source: String) -> SimulationError {
        var error = self
        error.source = source
        return error
    }

    package var description: String {
        let line = source.map { "\($0): \(message)" } ?? message
        return line.split(whereSeparator: \.isNewline).joined(separator: " ").escapedForTerminal()
    }
}
