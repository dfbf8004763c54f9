import Logging
import Synchronization

/// Terminates apps for the system, and records every termination, whoever caused it.
///
/// A termination the system asks for is one call, ``terminate(_:reason:step:)``, that returns the
/// record once the app's run loop has let go of its memory. Terminations the system does not ask
/// for (a deadline, an expired background task, an app terminated directly) are heard through the
/// lifecycle events and recorded the same way: the heap is closed as the app is terminated, and
/// the record is written when the run loop has released the app's objects.
final class Terminator: Sendable {
    /// A terminated app whose run loop is still letting go of its memory.
    private struct Draining {
        let reason: TerminationReason
        let state: AppState
        let footprintBytes: Int
        let time: ContinuousClock.Instant
        let heap: AppHeap?
        /// The system asked for this termination, on behalf of `step`.
        let requested: Bool
        let step: ReclamationStep?
    }

    private struct State {
        /// The step that asked for each termination under way, by app.
        var requested: [AppIdentifier: ReclamationStep?] = [:]
        var draining: [AppIdentifier: Draining] = [:]
        /// Records of the terminations under way that the system asked for, until taken.
        var finished: [AppIdentifier: TerminationRecord] = [:]
    }

    private let registry: PurgeRegistry
    /// The process apps, whose records say how their processes ended.
    private let processes: ProcessApps
    private let journal: ReclamationJournal
    private let logger: Logger
    private let state = Mutex(State())

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
    func terminate(
        _ app: App, reason: TerminationReason, step: ReclamationStep?,
        from states: [AppState] = [.inactive, .active, .background, .suspended]
    ) async -> TerminationRecord? {
        let identifier = app.identifier
        state.withLock { state in
            state.requested[identifier] = .some(step)
            state.finished[identifier] = nil
        }
        do {
            try await app.terminate(reason: reason, from: states)
        } catch {
            state.withLock { state in
                state.requested.removeValue(forKey: identifier)
                state.requested.shrinkIfSparse()
            }
            return nil
        }
        return state.withLock { state in
            defer { state.finished.shrinkIfSparse() }
            return state.finished.removeValue(forKey: identifier)
        }
    }

    /// Follows the apps' lifecycles, synchronously, on the thread that reports each event.
    func observe(_ event: LifecycleEvent) {
        switch event {
        case .terminated(let app, let reason, let state):
            beginDraining(app, reason: reason, state: state)
        case .released(let app):
            finish(app)
        case .stateChanged, .callback, .delivered, .restorationFailed:
            break
        }
    }

    /// Called as `identifier` is terminated, before its run loop lets go of anything: notes its
    /// footprint and closes its heap, so a relaunch starts with a new one.
    private func beginDraining(_ identifier: AppIdentifier, reason: TerminationReason, state appState: AppState) {
        let footprint = registry.footprint(of: identifier).totalBytes
        let heap = registry.removeApp(identifier)
        state.withLock { state in
            let requested = state.requested.removeValue(forKey: identifier)
            state.requested.shrinkIfSparse()
            state.draining[identifier] = Draining(
                reason: reason, state: appState, footprintBytes: footprint, time: .now, heap: heap,
                requested: requested != nil, step: requested ?? nil
            )
        }
    }

    /// Called on `identifier`'s run loop once it has let go of its memory: records the termination.
    private func finish(_ identifier: AppIdentifier) {
        let draining = state.withLock { state in
            defer { state.draining.shrinkIfSparse() }
            return state.draining.removeValue(forKey: identifier)
        }
        guard let draining else { return }
        let remaining = draining.heap?.allocatedBytes ?? 0
        let record = TerminationRecord(
            app: identifier, state: draining.state, footprintBytes: draining.footprintBytes,
            reason: draining.reason, returnedBytes: max(0, draining.footprintBytes - remaining),
            time: draining.time, step: draining.step, processExit: processes.takeExit(of: identifier)
        )
        if draining.requested {
            state.withLock { $0.finished[identifier] = record }
        }
        // A termination asked for explicitly (a shutdown) is routine; any other is news.
        logger.log(level: record.reason == .explicit ? .info : .notice, "terminated app", metadata: [
            "app": "\(identifier)", "reason": "\(record.reason)", "state": "\(record.state)",
            "footprint": "\(record.footprintBytes)", "returned": "\(record.returnedBytes)",
            "step": "\(record.step.map(\.description) ?? "none")",
        ])
        journal.terminated(record)
    }
}
