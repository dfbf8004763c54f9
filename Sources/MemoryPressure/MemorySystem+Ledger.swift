/// What a memory system keeps about its apps and what it has done, guarded by its mutex.
struct Ledger {
    /// The most ladder runs kept.
    static let runCapacity = 1000
    /// The most termination records kept.
    static let terminationCapacity = 10_000

    var apps: [AppIdentifier: HostedApp] = [:]
    var terminations: [TerminationRecord] = []
    var runs: [LadderRun] = []
    var latency = PurgeLatencyStatistics()
    /// Terminations the system asked for, by app: the step that chose the app, and where to hand
    /// the record.
    var requested: [AppIdentifier: RequestedTermination] = [:]
    /// Terminated apps whose run loops have not yet let go of their memory.
    var draining: [AppIdentifier: DrainingApp] = [:]
    /// Where apps entering the background are sent while the system runs.
    var enteringBackground: AsyncStream<AppIdentifier>.Continuation?

    mutating func append(_ termination: TerminationRecord) {
        if terminations.count == Self.terminationCapacity { terminations.removeFirst() }
        terminations.append(termination)
    }

    mutating func append(_ run: LadderRun) {
        if runs.count == Self.runCapacity { runs.removeFirst() }
        runs.append(run)
        if let latency = run.latency { self.latency.record(latency) }
    }
}

/// An app the system hosts, with its own limits.
struct HostedApp: Sendable {
    let app: App
    let limits: AppMemoryLimits
}

/// A termination the system asked for.
struct RequestedTermination: Sendable {
    /// The ladder step that chose the app, or nil when the ladder did not (a shutdown).
    let step: ReclamationStep?
    let record: Completion<TerminationRecord>
}

/// A terminated app whose run loop is still letting go of its memory.
struct DrainingApp: Sendable {
    let reason: TerminationReason
    let state: AppState
    let footprintBytes: Int
    let time: ContinuousClock.Instant
    let heap: AppHeap?
    let requested: RequestedTermination?
}
