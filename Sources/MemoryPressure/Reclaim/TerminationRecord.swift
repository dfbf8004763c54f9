/// One app's termination, as the system records it.
public struct TerminationRecord: Hashable, Sendable {
    /// The app terminated.
    public var app: AppIdentifier
    /// The state it was terminated from.
    public var state: AppState
    /// Its footprint when it was terminated, in bytes.
    public var footprintBytes: Int
    /// Why it was terminated.
    public var reason: TerminationReason
    /// How much of its footprint was given back once its run loop had drained: its heap's bytes and
    /// its caches' declared costs that are gone. Buffers something else still holds are not counted.
    public var returnedBytes: Int
    /// When it was terminated.
    public var time: ContinuousClock.Instant
    /// The ladder step that chose it, or nil when the ladder did not (a deadline, an expired
    /// background task, an explicit termination).
    public var step: ReclamationStep?

    /// A record with these details.
    package init(
        app: AppIdentifier, state: AppState, footprintBytes: Int, reason: TerminationReason,
        returnedBytes: Int, time: ContinuousClock.Instant, step: ReclamationStep?
    ) {
        self.app = app
        self.state = state
        self.footprintBytes = footprintBytes
        self.reason = reason
        self.returnedBytes = returnedBytes
        self.time = time
        self.step = step
    }
}
