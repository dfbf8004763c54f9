/// A scenario that cannot run, in one line: where the problem is, what it is, and what is accepted.
///
/// ```
/// scenario file trip.json: apps[2].profile "camera" is unknown; expected one of photos, music, maps, browser, utility or a name under "profiles"
/// --duration "-5s" is negative; expected 1s to 1h
/// ```
public struct ScenarioError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where the scenario came from: `scenario file trip.json`, `scenario "default"`, `--budget`.
    public var source: String
    /// The field at fault, as a path into the scenario file (`apps[2].profile`), or nil.
    public var field: String?
    /// What is wrong, naming the value given.
    public var problem: String
    /// What is accepted: the range or form.
    public var expected: String

    /// An error in `field` of the scenario from `source`.
    public init(source: String, field: String? = nil, problem: String, expected: String) {
        self.source = source
        self.field = field
        self.problem = problem
        self.expected = expected
    }

    public var description: String {
        let subject = field.map { "\($0) " } ?? ""
        return "\(source): \(subject)\(problem); expected \(expected)".replacingNewlines()
    }
}

extension String {
    /// The text on one line: each run of line breaks becomes a space.
    func replacingNewlines() -> String {
        split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
