import MemoryPressureRuntime
import MemoryPressureLifecycle
import MemoryPressureProcesses
/// One app's termination, as the system records it.
///
/// Encodable as an object: `app`, `state` and `reason` by name, `footprintBytes`, `returnedBytes`,
/// `time` (seconds since boot, see ``encode(to:)``), `step` by name, `processExit` (see
/// ``/MemoryPressureProcesses/ProcessExit``) and `decision` (`footprintBytes`, `targetBytes`,
/// `runFootprintBytes`, `earlierReturnedBytes`), each
/// left out when nil.
public struct TerminationRecord: Hashable, Sendable, Encodable {
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
    /// How the app's process ended, for a process app; nil for an in-process app.
    public var processExit: ProcessExit?
    /// What the ladder measured as it chose the app, and the target it worked down to; nil when the
    /// ladder did not choose it.
    public var decision: LadderDecision?

    /// What the ladder decided a termination by.
    ///
    /// Within one run of the ladder, ``footprintBytes`` is never more than
    /// ``runFootprintBytes`` less ``earlierReturnedBytes``: the ladder never counts memory its
    /// earlier terminations already returned, so it never terminates an app for it.
    public struct LadderDecision: Hashable, Sendable, Encodable {
        /// The system's footprint the ladder counted before it terminated the app: the last
        /// measurement, and never more than the footprint before the run's earlier terminations
        /// less what they returned.
        public var footprintBytes: Int
        /// The footprint the ladder works down to; it terminated the app because the footprint was above it.
        public var targetBytes: Int
        /// The footprint the ladder measured in this run before its first termination.
        public var runFootprintBytes: Int
        /// What the run's terminations before this one returned, in bytes (0 for the run's first).
        public var earlierReturnedBytes: Int

        /// A decision at `footprintBytes` for `targetBytes`; by default the run's first termination,
        /// measured at `footprintBytes`.
        public init(footprintBytes: Int, targetBytes: Int, runFootprintBytes: Int? = nil, earlierReturnedBytes: Int = 0) {
            self.footprintBytes = footprintBytes
            self.targetBytes = targetBytes
            self.runFootprintBytes = runFootprintBytes ?? footprintBytes
            self.earlierReturnedBytes = earlierReturnedBytes
        }
    }

    /// A record with these details.
    package init(
        app: AppIdentifier, state: AppState, footprintBytes: Int, reason: TerminationReason,
        returnedBytes: Int, time: ContinuousClock.Instant, step: ReclamationStep?, processExit: ProcessExit? = nil,
        decision: LadderDecision? = nil
    ) {
        self.decision = decision
        self.app = app
        self.state = state
        self.footprintBytes = footprintBytes
        self.reason = reason
        self.returnedBytes = returnedBytes
        self.time = time
        self.step = step
        self.processExit = processExit
    }
}

extension TerminationRecord {
    private enum CodingKeys: String, CodingKey {
        case app, state, footprintBytes, reason, returnedBytes, time, step, processExit, decision
    }

    /// Encodes the record. `time` is a number of seconds on the continuous clock's timeline, which
    /// on Linux is `CLOCK_BOOTTIME`: seconds since boot, as the first figure of `/proc/uptime`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(app, forKey: .app)
        try container.encode(state, forKey: .state)
        try container.encode(footprintBytes, forKey: .footprintBytes)
        try container.encode(reason, forKey: .reason)
        try container.encode(returnedBytes, forKey: .returnedBytes)
        try container.encode(secondsSinceBoot: time, forKey: .time)
        try container.encodeIfPresent(step, forKey: .step)
        try container.encodeIfPresent(processExit, forKey: .processExit)
        try container.encodeIfPresent(decision, forKey: .decision)
    }
}

extension TerminationRecord: CustomStringConvertible {
    /// The record for people and logs: `app acme terminated from suspended for system pressure:
    /// footprint 12 MiB, returned 11.5 MiB, step terminateSuspended`.
    public var description: String {
        "app \(app) terminated from \(state) for \(reason): footprint \(ByteCount(footprintBytes)), "
            + "returned \(ByteCount(returnedBytes)), step \(step.map(\.description) ?? "none")"
            + (processExit.map { ", process \($0)" } ?? "")
            + (decision.map {
                ", chosen at footprint \(ByteCount($0.footprintBytes)) above target \(ByteCount($0.targetBytes)) "
                    + "(\(ByteCount($0.runFootprintBytes)) measured before the run's terminations, "
                    + "less \(ByteCount($0.earlierReturnedBytes)) they returned)"
            } ?? "")
    }
}
