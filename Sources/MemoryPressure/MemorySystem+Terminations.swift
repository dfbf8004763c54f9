import Logging

extension MemorySystem {
    /// Terminates `app` for `reason`, on behalf of ladder step `step` (nil: not the ladder), and
    /// returns its record once its run loop has let go of its memory, or nil when the app was not
    /// running or did not let go within its termination deadline (its record comes when it does).
    /// A `cancellable` wait for the record also ends when the task is cancelled.
    func terminate(
        _ app: App, reason: TerminationReason, step: ReclamationStep?, cancellable: Bool = true
    ) async -> TerminationRecord? {
        let requested = RequestedTermination(step: step, record: Completion())
        ledger.withLock { $0.requested[app.identifier] = requested }
        do {
            try await app.terminate(reason: reason)
        } catch {
            ledger.withLock { _ = $0.requested.removeValue(forKey: app.identifier) }
            return nil
        }
        return await requested.record.value(timeout: app.configuration.terminationDeadline, cancellable: cancellable)
    }

    /// Follows the apps' lifecycles, synchronously, on the thread that reports each event.
    func observe(_ event: LifecycleEvent) {
        switch event {
        case .stateChanged(let app, _, .background):
            ledger.withLock { _ = $0.enteringBackground?.yield(app) }
        case .terminated(let app, let reason, let state):
            beginDraining(app, reason: reason, state: state)
        case .released(let app):
            finishTermination(of: app)
        case .stateChanged, .callback, .restorationFailed:
            break
        }
    }

    /// Called as `identifier` is terminated, before its run loop lets go of anything: notes its
    /// footprint and closes its heap, so a relaunch starts with a new one.
    private func beginDraining(_ identifier: AppIdentifier, reason: TerminationReason, state: AppState) {
        let footprint = registry.footprint(of: identifier).totalBytes
        let heap = registry.removeApp(identifier)
        ledger.withLock { ledger in
            ledger.draining[identifier] = DrainingApp(
                reason: reason, state: state, footprintBytes: footprint, time: .now, heap: heap,
                requested: ledger.requested.removeValue(forKey: identifier)
            )
        }
    }

    /// Called on `identifier`'s run loop once it has let go of its memory: records the termination.
    private func finishTermination(of identifier: AppIdentifier) {
        guard let draining = ledger.withLock({ $0.draining.removeValue(forKey: identifier) }) else { return }
        let remaining = draining.heap?.allocatedBytes ?? 0
        let record = TerminationRecord(
            app: identifier, state: draining.state, footprintBytes: draining.footprintBytes,
            reason: draining.reason, returnedBytes: max(0, draining.footprintBytes - remaining),
            time: draining.time, step: draining.requested?.step
        )
        ledger.withLock { $0.append(record) }
        // A termination asked for explicitly (a shutdown) is routine; any other is news.
        logger.log(level: record.reason == .explicit ? .info : .notice, "terminated app", metadata: [
            "app": "\(identifier)", "reason": "\(record.reason)", "state": "\(record.state)",
            "footprint": "\(record.footprintBytes)", "returned": "\(record.returnedBytes)",
            "step": "\(record.step.map(\.description) ?? "none")",
        ])
        emit(.termination(record))
        draining.requested?.record.resolve(record)
    }
}
