/// Why a child process's app was launched, how its previous instance ended, and the state it saved
/// then: what an in-process app finds in its launch options, handed to the child through its
/// client (protocol 2 and later).
///
/// The names are the system's own, as text, so that a child built against an older library reads
/// the reasons a newer system adds.
public struct ClientLaunchOptions: Hashable, Sendable {
    /// Why the app was launched: `user`, `backgroundEvent`, `url` or `stateRestoration` (the
    /// library's `LaunchOptions.Reason`).
    public var reason: String
    /// The background event's name or the URL, for those reasons; nil otherwise.
    public var reasonDetail: String?
    /// How the app's previous instance ended; nil on its first launch.
    public var previousTermination: PreviousTermination?
    /// The state the app's previous instance saved last (``MemoryPressureClient/saveState(_:)``),
    /// byte for byte; nil when it saved none, or the system keeps no states.
    public var restoredState: [UInt8]?

    /// How an app's previous instance ended.
    public struct PreviousTermination: Hashable, Sendable {
        /// Why the system terminated it, by the library's `TerminationReason` case name:
        /// `systemPressure`, `perAppLimit`, `deadline`, `launchDeadline`, `backgroundTaskExpired`,
        /// `explicit`, `processExited` or `processKilled`.
        public var reason: String
        /// The process's exit status, when it exited.
        public var exitStatus: Int32?
        /// The signal that ended the process, when one did (9 for the system's `SIGKILL`).
        public var signal: Int32?
        /// When it ended, in seconds since 1970 (UTC); nil when the system did not record it.
        public var time: Double?

        /// A termination for `reason`.
        public init(reason: String, exitStatus: Int32? = nil, signal: Int32? = nil, time: Double? = nil) {
            self.reason = reason
            self.exitStatus = exitStatus
            self.signal = signal
            self.time = time
        }
    }

    /// Options for a launch for `reason`.
    public init(
        reason: String = "user", reasonDetail: String? = nil, previousTermination: PreviousTermination? = nil,
        restoredState: [UInt8]? = nil
    ) {
        self.reason = reason
        self.reasonDetail = reasonDetail
        self.previousTermination = previousTermination
        self.restoredState = restoredState
    }
}

extension ClientLaunchOptions {
    /// The options as a message's argument: `key=value` fields separated by one space, each value
    /// percent-encoded (the state in base64): `reason`, `detail`, `previous`, `status`, `signal`,
    /// `time`, `state`, the absent ones left out.
    var wireArgument: String {
        var fields = ["reason=\(WireText.percentEncoded(reason))"]
        if let reasonDetail { fields.append("detail=\(WireText.percentEncoded(reasonDetail))") }
        if let previousTermination {
            fields.append("previous=\(WireText.percentEncoded(previousTermination.reason))")
            if let status = previousTermination.exitStatus { fields.append("status=\(status)") }
            if let signal = previousTermination.signal { fields.append("signal=\(signal)") }
            if let time = previousTermination.time { fields.append("time=\(time)") }
        }
        if let restoredState { fields.append("state=\(WireText.base64(restoredState))") }
        return fields.joined(separator: " ")
    }

    /// The options read from a message's argument; nil when it is malformed (a field without `=`,
    /// a value that does not decode, no `reason`). Unknown keys are skipped: a newer system's.
    init?(wireArgument: some Collection<UInt8>) {
        var values: [String: String] = [:]
        var state: [UInt8]?
        for field in wireArgument.split(separator: UInt8(ascii: " ")) {
            guard let equals = field.firstIndex(of: UInt8(ascii: "=")) else { return nil }
            let key = String(decoding: field[..<equals], as: UTF8.self)
            let value = field[field.index(after: equals)...]
            if key == "state" {
                guard let decoded = WireText.decodingBase64(value) else { return nil }
                state = decoded
            } else {
                guard let decoded = WireText.percentDecoded(value) else { return nil }
                values[key] = decoded
            }
        }
        guard let reason = values["reason"] else { return nil }
        self.init(reason: reason, reasonDetail: values["detail"], restoredState: state)
        if let previous = values["previous"] {
            previousTermination = PreviousTermination(
                reason: previous, exitStatus: values["status"].flatMap { Int32($0) }, signal: values["signal"].flatMap { Int32($0) },
                time: values["time"].flatMap { Double($0) }
            )
        }
    }
}
