import Logging
import Synchronization
@_spi(Benchmarks) import MemoryPressureRuntime
import MemoryPressureCaches
import MemoryPressureLifecycle
import MemoryPressureProcesses

/// Terminates apps for the system, and records every termination, whoever caused it.
///
/// A termination the system asks for is one call, ``terminate(_:reason:step:)``, that returns the
/// record once the app's run loop has let go of its memory. Terminations the system does not ask
/// for (a deadline, an expired background task, an app terminated directly) are recorded the same
/// way: the system's host tells of every termination as it happens (``beginDraining(_:reason:state:)``:
/// the heap is closed) and of the release of the app's objects on its run loop (``finish(_:)``: the
/// record is written).
///
/// Calls for one app at once (two shutdowns, a shutdown and the ladder) are one termination: the
/// first call the app accepts terminates it, and every call made before its record is written gets
/// that record, once the app's run loop has let go of its memory.
final class Terminator: Sendable {
    /// One call of ``terminate(_:reason:step:from:)``: resolved with the record of the termination
    /// that took it.
    private final class Request: Sendable {
        let step: ReclamationStep?
        /// What the ladder measured as it chose the app, for a step's call.
        let decision: TerminationRecord.LadderDecision?
        let record = Completion<TerminationRecord>()

        init(step: ReclamationStep?, decision: TerminationRecord.LadderDecision?) {
            self.step = step
            self.decision = decision
        }
    }

    /// A terminated app whose run loop is still letting go of its memory.
    private struct Draining {
        let reason: TerminationReason
        let state: AppState
        let footprintBytes: Int
        let time: ContinuousClock.Instant
        let heap: AppHeap?
        /// The calls that asked for this termination (none: the system did not), the first one's
        /// step recorded.
        var requests: [Request]
    }

    private struct State {
        /// The calls under way for each app that no termination has taken yet, in the order made.
        var requested: [AppIdentifier: [Request]] = [:]
        var draining: [AppIdentifier: Draining] = [:]

        /// Forgets `request` of `app` where no termination has taken it; true when it was there.
        mutating func withdraw(_ request: Request, of app: AppIdentifier) -> Bool {
            guard let index = requested[app]?.firstIndex(where: { $0 === request }) else { return false }
            requested[app]?.remove(at: index)
            if requested[app]?.isEmpty == true { requested[app] = nil }
            requested.shrinkIfSparse()
            return true
        }
    }

    private let registry: PurgeRegistry
    /// The process apps, whose records say how their processes ended.
    private let processes: ProcessApps
    private let journal: ReclamationJournal
    private let logger: Logger
    private let state = LibraryLock(State())
    /// The app each call of ``terminate(_:reason:step:from:)`` asks for, published as the call is
    /// listed: not API, for tests that hold a termination until every call they made has asked.
    let requests = EventSource<AppIdentifier>()
    /// Each terminated app, published as its bookkeeping begins (with no lock held), just before it
    /// reads the app's caches' costs: not API, for tests of what that reading may wait for.
    let drainingBegins = EventSource<AppIdentifier>()

    init(registry: PurgeRegistry, processes: ProcessApps, journal: ReclamationJournal, logger: Logger) {
        self.registry = registry
        self.processes = processes
        self.journal = journal
        self.logger = logger
    }

    /// Terminates `app` for `reason`, on behalf of ladder step `step` (nil: not the ladder), and
    /// returns its record once its run loop has let go of its memory; nil when the app was not
    /// running, or did not let go within its termination deadline (its record comes when it does).
    /// Only an app in one of `states` is terminated, checked and carried out atomically: one chosen
    /// as a suspended app is left alone if it came back to the foreground meanwhile.
    ///
    /// A call not made for a step (a shutdown) that finds the app being terminated already (another
    /// call's, or the app's own, whose record is still to come) waits for that termination, as long
    /// as its own would have taken, and returns its record. A step's call returns nil at once: the
    /// ladder goes on to its next victim rather than wait on a termination it did not choose.
    func terminate(
        _ app: App, reason: TerminationReason, step: ReclamationStep?,
        from states: [AppState] = [.inactive, .active, .background, .suspended], decision: TerminationRecord.LadderDecision? = nil
    ) async -> TerminationRecord? {
        let identifier = app.identifier
        let request = Request(step: step, decision: decision)
        state.withLock { $0.requested[identifier, default: []].append(request) }
        requests.emit(identifier)
        do {
            try await app.terminate(reason: reason, from: states)
            // The record is written before the call returns, unless the run loop overran the
            // deadline; then it comes later, to the journal only.
            return request.record.resolvedValue
        } catch {
            guard step == nil else {
                // The ladder goes on to its next victim rather than wait on a termination it did
                // not choose.
                _ = state.withLock { $0.withdraw(request, of: identifier) }
                return nil
            }
            // Read before the lock below, alone: a termination under way (`willTerminate` runs)
            // has not ended yet, and takes the request, still listed, as it ends.
            let terminating = app.record.withLock { $0.machine.isTerminating }
            let joins = state.withLock { state -> Bool in
                // Taken by a termination already, or to be by the one under way: its record comes.
                guard !terminating, state.withdraw(request, of: identifier) else { return true }
                // Ended before the request was made, its run loop still letting go.
                if app.systemState == .notRunning, state.draining[identifier] != nil {
                    state.draining[identifier]?.requests.append(request)
                    return true
                }
                return false
            }
            guard joins else { return nil }
            // Its own termination would have waited for `willTerminate`, then for the run loop.
            return await request.record.value(timeout: app.configuration.terminationDeadline * 2, on: app.threads.timers, cancellable: false)
        }
    }

    /// Called as `identifier` is terminated, before its run loop lets go of anything: notes its
    /// footprint and closes its heap, so a relaunch starts with a new one.
    func beginDraining(_ identifier: AppIdentifier, reason: TerminationReason, state appState: AppState) {
        drainingBegins.emit(identifier)
        let footprint = registry.footprint(of: identifier).totalBytes
        let heap = registry.removeApp(identifier)
        state.withLock { state in
            let requests = state.requested.removeValue(forKey: identifier) ?? []
            state.requested.shrinkIfSparse()
            state.draining[identifier] = Draining(
                reason: reason, state: appState, footprintBytes: footprint, time: .now, heap: heap, requests: requests
            )
        }
    }

    /// Called on `identifier`'s run loop once it has let go of its memory: records the termination.
    func finish(_ identifier: AppIdentifier) {
        let draining = state.withLock { state in
            defer { state.draining.shrinkIfSparse() }
            return state.draining.removeValue(forKey: identifier)
        }
        guard let draining else { return }
        // What the app still holds: its closed heap's live bytes, and the declared cost of its caches
        // that something outside the app keeps (they stay registered, and count in its footprint).
        registry.pruneReleased(identifier)
        let remaining = (draining.heap?.allocatedBytes ?? 0)
            .addingClamped(registry.footprint(of: identifier).declaredBytesOutsideHeap)
        let record = TerminationRecord(
            app: identifier, state: draining.state, footprintBytes: draining.footprintBytes,
            reason: draining.reason, returnedBytes: max(0, draining.footprintBytes - remaining),
            time: draining.time, step: draining.requests.first?.step ?? nil, processExit: processes.takeExit(of: identifier),
            decision: draining.requests.first?.decision
        )
        for request in draining.requests {
            request.record.resolve(record)
        }
        // A termination asked for explicitly (a shutdown) is routine; any other is news.
        var metadata: Logger.Metadata = [
            "app": "\(identifier)", "reason": "\(record.reason)", "state": "\(record.state)",
            "footprint": "\(record.footprintBytes)", "returned": "\(record.returnedBytes)",
            "step": "\(record.step.map(\.description) ?? "none")",
        ]
        if let decision = record.decision {
            metadata["systemFootprint"] = "\(decision.footprintBytes)"
            metadata["target"] = "\(decision.targetBytes)"
        }
        logger.log(level: record.reason == .explicit ? .info : .notice, "terminated app", metadata: metadata)
        journal.terminated(record)
    }
}
