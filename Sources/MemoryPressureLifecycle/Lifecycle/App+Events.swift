@_spi(Benchmarks) import MemoryPressureRuntime
// How an app's lifecycle events leave its lock: a change made under the lock adds its events to the
// record's outbox; whoever releases the lock delivers them, in order, with no lock held: to the
// host first (the system's bookkeeping), then to the observers. Both may read any property of the
// app and call any of its methods.

extension App {
    /// Runs `body` under the record's lock, then, with the lock released, delivers the events it
    /// added (and any others waiting) unless another thread is delivering them already.
    nonisolated func withRecord<Result: Sendable, Failure: Error>(
        _ body: (inout LifecycleRecord) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let (result, delivers) = try record.withLock { record throws(Failure) in
            let result = try body(&record)
            return (result, record.outbox.claimDelivery())
        }
        if delivers { deliverEvents() }
        return result
    }

    /// As ``withRecord(_:)``, for the deadline timers' thread: the events `body` adds are delivered
    /// on a worker of the run-loop pool, not on the app's run loop (the callback overrunning its
    /// deadline blocks it), so that no observer, and no bookkeeping waiting for a lock a user's
    /// code holds (a cache's, during a discard callback), holds up the process's other deadlines.
    nonisolated func withRecordFromTimer<Result: Sendable>(_ body: (inout LifecycleRecord) -> Result) -> Result {
        let (result, delivers) = record.withLock { record in
            let result = body(&record)
            return (result, record.outbox.claimDelivery())
        }
        if delivers { threads.pool.run { self.deliverEvents() } }
        return result
    }

    /// Adds `event`, with the termination it tells of if any, to the events delivered once the
    /// record's lock is released. Called under it.
    package nonisolated func report(_ event: LifecycleEvent, of termination: AppTermination? = nil, in record: inout LifecycleRecord) {
        if events != nil || host != nil { record.outbox.add(.event(event, of: termination)) }
    }

    /// Reports `event`, with the termination it tells of if any, delivered in order after every
    /// event the app decided before it. Called with no lock held.
    package nonisolated func report(_ event: LifecycleEvent, of termination: AppTermination? = nil) {
        withRecord { record in report(event, of: termination, in: &record) }
    }

    /// Returns once every event the app has decided so far is delivered.
    nonisolated func eventsDelivered() async {
        if let completion = record.withLock({ $0.outbox.waitForDelivery() }) {
            await completion.value
        }
    }

    /// Delivers the outbox's entries one by one, outside the lock, until none is left; for the
    /// thread that claimed the delivery.
    nonisolated func deliverEvents() {
        var hasDelivered = false
        while true {
            let (entry, satisfied) = record.withLock { $0.outbox.next(afterDelivering: hasDelivered) }
            for completion in satisfied { completion.resolve(()) }
            switch entry {
            case .event(let event, let termination):
                tellHost(event, of: termination)
                events?.emit(event)
            case .release: queueReleaseIfPending()
            // Released as this turn of the loop ends, with no lock held.
            case .drop(_, let onRemove): callOut { for end in onRemove { end() } }
            case .resolve(let completion, let state): completion.resolve(state)
            case nil: return
            }
            hasDelivered = true
        }
    }

    /// Tells the host of the moves, the termination and the release `event` reports; `termination`
    /// is the one a `terminated` or `released` event tells of.
    private nonisolated func tellHost(_ event: LifecycleEvent, of termination: AppTermination?) {
        guard let host else { return }
        callOut {
            switch event {
            case .stateChanged(_, let previous, let state): host.app(self, movedFrom: previous, to: state)
            case .terminated(_, let reason, let state):
                termination.map { host.appTerminated(self, $0, reason: reason, from: state) }
            case .released: termination.map { host.appReleased(self, $0) }
            case .callback, .delivered, .restorationFailed: break
            }
        }
    }

    /// Queues the release of a terminated app on its run loop, unless a relaunch has queued it
    /// already, ahead of its own steps. Queued under the record's lock, as the lifecycle's steps
    /// are: taken and queued apart, a relaunch in between found nothing pending and queued its
    /// launch ahead of the release, which then let go of the new launch's delegate and view
    /// controllers (the interleavings under ThreadSanitizer saw a launch's callbacks come before the
    /// last termination's release).
    private nonisolated func queueReleaseIfPending() {
        record.withLock { record in
            guard let termination = record.machine.takePendingRelease() else { return }
            enqueue { app in app.releaseAfterTermination(termination) }
        }
    }
}
