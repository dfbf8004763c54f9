import Logging
@_spi(Benchmarks) import MemoryPressureRuntime
import MemoryPressureCaches
import MemoryPressureLifecycle
import MemoryPressureProcesses

/// Terminates apps for the system, and records every termination, whoever caused it.
///
/// A termination the system asks for is one call, ``terminate(_:reason:step:from:decision:)``: it
/// asks the app's lifecycle for the termination, which the lifecycle makes as it decides it (an
/// ``/MemoryPressureLifecycle/AppTermination``, with this call's ``TerminationBook`` as its part),
/// and awaits its end (the callbacks or their deadline, the release, a process app's reap), then
/// returns the record. Terminations the system does not ask for (a deadline, an expired background
/// task, an app terminated directly) are recorded the same way: the system's host hands over each
/// termination as it ends the app (``beginDraining(_:_:reason:state:)``: the heap is closed) and
/// as the app's run loop lets go of its objects (``finish(_:_:)``: the record is written).
///
/// Calls for one app at once (two shutdowns, a shutdown and the ladder) are one termination: the
/// first call the app accepts terminates it, and a shutdown's call that finds it terminating joins
/// that termination object and gets its record, once the app's run loop has let go of its memory.
final class Terminator: Sendable {
    private let registry: PurgeRegistry
    /// The process apps, whose records say how their processes ended.
    private let processes: ProcessApps
    private let journal: ReclamationJournal
    private let logger: Logger
    /// The app each call of ``terminate(_:reason:step:from:decision:)`` asks for, published once
    /// the call has begun or joined its termination: not API, for tests that hold a termination
    /// until every call they made has asked.
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
        let book = TerminationBook(step: step, decision: decision)
        let termination: AppTermination
        do {
            termination = try app.beginTermination(reason: reason, from: states, recordingIn: book)
        } catch {
            guard step == nil else { return nil }
            return await join(app)
        }
        requests.emit(app.identifier)
        await app.end(of: termination)
        // The record is written before the call returns, unless the run loop overran the
        // deadline; then it comes later, to the journal only.
        return book.record.resolvedValue
    }

    /// Joins the termination `app` is in (`willTerminate` runs, or it has ended and its record is
    /// still to come) and returns its record, waiting as long as a termination of its own would
    /// have: for `willTerminate`, then for the run loop. Nil when there is none to join.
    private func join(_ app: App) async -> TerminationRecord? {
        guard let termination = app.latestTermination else { return nil }
        let book = TerminationBook.of(termination)
        guard book.record.resolvedValue == nil else { return nil }
        requests.emit(app.identifier)
        return await book.record.value(timeout: app.configuration.terminationDeadline * 2, on: app.threads.timers, cancellable: false)
    }

    /// Called as `termination` ends the app `identifier`, before its run loop lets go of anything:
    /// notes its footprint and closes its heap, so a relaunch starts with a new one.
    func beginDraining(_ identifier: AppIdentifier, _ termination: AppTermination, reason: TerminationReason, state appState: AppState) {
        drainingBegins.emit(identifier)
        let footprint = registry.footprint(of: identifier).totalBytes
        let heap = registry.removeApp(identifier)
        TerminationBook.of(termination).ended(.init(reason: reason, state: appState, footprintBytes: footprint, time: .now, heap: heap))
    }

    /// Called on `identifier`'s run loop once it has let go of what it held as `termination` ended
    /// it: records the termination.
    func finish(_ identifier: AppIdentifier, _ termination: AppTermination) {
        let book = TerminationBook.of(termination)
        guard let ending = book.takeEnding() else { return }
        // What the app still holds: its closed heap's live bytes, and the declared cost of its caches
        // that something outside the app keeps (they stay registered, and count in its footprint).
        registry.pruneReleased(identifier)
        let remaining = (ending.heap?.allocatedBytes ?? 0)
            .addingClamped(registry.footprint(of: identifier).declaredBytesOutsideHeap)
        let record = TerminationRecord(
            app: identifier, state: ending.state, footprintBytes: ending.footprintBytes,
            reason: ending.reason, returnedBytes: max(0, ending.footprintBytes - remaining),
            time: ending.time, step: book.step, processExit: processes.takeExit(of: identifier), decision: book.decision
        )
        book.record.resolve(record)
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
