import Testing

/// Records `message` as an issue of the running test: what a helper of MemoryPressureTestKit (which
/// does not import Testing) is given to report a failure where it cannot throw, in an app's callback.
public func recordIssue(_ message: String) {
    Issue.record(Comment(rawValue: message))
}
