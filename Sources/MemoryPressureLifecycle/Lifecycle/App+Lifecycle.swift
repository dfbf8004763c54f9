@_spi(Benchmarks) import MemoryPressureRuntime
// How an app carries out its lifecycle's actions: the machine (``LifecycleStateMachine``) decides
// under the record's lock and returns actions; one interpreter carries them out there, in order.
// Nothing it does runs the app's code or emits an event: events and dropped code wait in the
// outbox for delivery once the lock is released (`App+Events.swift`).
//
// The lock order: the record's lock first; under it, briefly, the notification registry's (and,
// under that, the run-loop pool's, as a return queues the held notifications), the deadline
// timers', the run-loop pool's, a completion's and a termination's part (`AppTermination`). None of those is held while the record's lock
// is taken.

extension App {
    /// The app's lifecycle: a background task's expiration handler runs isolated to the app.
    package typealias Lifecycle = LifecycleStateMachine<@Sendable (isolated App) -> Void>

    /// Runs `change` on the lifecycle under the record's lock and carries out the actions it
    /// returns there; its events are delivered once the lock is released.
    package nonisolated func update(_ change: (inout Lifecycle) -> [Lifecycle.Action]) {
        withRecord { record in carryOut(change(&record.machine), on: &record) }
    }

    /// Carries out the lifecycle's `actions`, in order, under the record's lock. Steps queued on the
    /// run loop resolve `completion`, a transition's, once they have run.
    nonisolated func carryOut(_ actions: [Lifecycle.Action], on record: inout LifecycleRecord, completion: Completion<AppState>? = nil) {
        for action in actions {
            switch action {
            case .publishStates(let word):
                publishedStates.store(word, ordering: .releasing)
            case .report(let event):
                // A `terminated` event tells of the termination the machine has just ended.
                var termination: AppTermination?
                if case .terminated = event { termination = record.machine.latestTermination }
                report(event, of: termination, in: &record)
            case .run(let steps, let generation):
                schedule(steps, generation: generation, completion: completion, in: &record)
            case .openNotifications:
                notificationRegistry.open()
            case .suspendNotifications:
                notificationRegistry.suspend()
            case .queueNotification(let notification):
                notificationRegistry.queue(notification)
            case .resumeNotifications(let before, let after, let generation):
                notificationRegistry.resume { queued in
                    schedule(before + queued.map(LifecycleStep.deliver) + after, generation: generation, completion: completion, in: &record)
                }
            case .closeNotifications(let handlers):
                let observers = notificationRegistry.close()
                record.outbox.add(.drop(handlers.map { $0 as any Sendable } + observers.removed, onRemove: observers.onRemove))
            case .armBackgroundExpiry(let deadline, let step):
                // Armed under the lock: a disarm (a return to the foreground, a termination) that
                // follows finds this timer.
                record.backgroundExpiry = threads.timers.schedule(at: deadline) { [self] in
                    backgroundExpiryDue(step)
                }
            case .cancelBackgroundExpiry:
                record.backgroundExpiry.map(threads.timers.cancel)
                record.backgroundExpiry = nil
            case .queueRelease:
                record.outbox.add(.release)
            }
        }
    }

    /// Queues `steps` on the run loop, under the record's lock so that they keep the order in which
    /// the lifecycle decided them; with none, has `completion` resolved with the state now, once
    /// the lock is released (resolving resumes its waiter).
    private nonisolated func schedule(
        _ steps: [LifecycleStep], generation: Int, completion: Completion<AppState>?, in record: inout LifecycleRecord
    ) {
        guard !steps.isEmpty else {
            if let completion { record.outbox.add(.resolve(completion, state)) }
            return
        }
        enqueue { app in
            app.run(steps, generation: generation, completion: completion)
        }
    }

    /// The background-time timer has fired for `step`: the lifecycle decides what comes of it, on
    /// the deadline timers' thread, from outside the run loop, so a blocked run loop or handler
    /// cannot keep the app alive.
    private nonisolated func backgroundExpiryDue(_ step: Lifecycle.BackgroundExpiryStep) {
        withRecordFromTimer { record in
            let actions = record.machine.backgroundExpiryDue(step, now: clock.now, runLoopRunsATurn: runLoop.isRunningATurn)
            carryOut(actions, on: &record)
        }
    }
}
