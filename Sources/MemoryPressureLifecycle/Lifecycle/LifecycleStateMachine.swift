import MemoryPressureRuntime
/// An app's lifecycle as a value: its states, the state its callbacks read, its background time and
/// tasks, its suspension holds and its termination. Each transition validates (a typed error
/// changes nothing) and returns the ``Action``s that carry it out, as swift-nio's `NIOAsyncWriter`
/// holds its state: the owner (``App``, under its lock) interprets them, and the tests drive the
/// same machine as their model.
///
/// The machine is pure: it reads no clock (a transition that starts background time is handed
/// `now`), arms no timer, takes no lock and calls no code of the app's. That is what lets a test
/// step it without threads, and what keeps every effect (user code, events) out of the lock.
///
/// `ExpirationHandler` is what a background task runs when its time is nearly out; the machine
/// only keeps it, hands it out, and drops it at a termination.
package struct LifecycleStateMachine<ExpirationHandler: Sendable> {
    /// What the owner does to carry out a transition, in the order given. Under the app's lock
    /// unless said otherwise: nothing here runs the app's code, and events wait in the outbox.
    package enum Action {
        /// Publish the states (a word made by ``PublishedStates``) for reads without the lock.
        case publishStates(UInt16)
        /// Report a lifecycle event: it waits in the outbox for delivery after the lock.
        case report(LifecycleEvent)
        /// Queue `steps` on the app's run loop for the launch `generation`; the transition waiting
        /// for them, if any, resumes once they have run (at once when there are none).
        case run([LifecycleStep], generation: Int)
        /// Start delivering notifications (a launch).
        case openNotifications
        /// Queue and coalesce notifications from now on (a suspension).
        case suspendNotifications
        /// Queue `notification` for the app's return (posted while it is suspended).
        case queueNotification(AppNotification)
        /// Deliver notifications again and queue, under the registry's lock so that none posted
        /// later overtakes them, `before`, the queued notifications, then `after` (a return from
        /// suspension), as ``run(_:generation:)`` does.
        case resumeNotifications(before: [LifecycleStep], after: [LifecycleStep], generation: Int)
        /// Drop the observers and queued notifications, and drop posts from now on (a
        /// termination); `handlers`, the app's code, are released after the lock with the
        /// observers.
        case closeNotifications(dropping: [ExpirationHandler])
        /// Arm the background-time timer at `deadline` for `step`: the stay's first, or the next in
        /// place of the one that fired.
        case armBackgroundExpiry(at: ContinuousClock.Instant, BackgroundExpiryStep)
        /// Cancel the armed background-time timer.
        case cancelBackgroundExpiry
        /// Queue the release of the terminated app's objects behind its `terminated` event.
        case queueRelease
    }

    /// The two ends of a stay's background time, which the owner's timer hands back to
    /// ``backgroundExpiryDue(_:now:runLoopRunsATurn:)``.
    package enum BackgroundExpiryStep: Sendable, Equatable {
        /// Shortly before the time runs out: the expiration handlers' turn.
        case warn(since: ContinuousClock.Instant, generation: Int)
        /// The time has run out: a task still open terminates the app, unless the handlers have
        /// not had their turn only because the run loop waits for a worker (`extensionsLeft` more
        /// waits).
        case end(since: ContinuousClock.Instant, generation: Int, extensionsLeft: Int)
    }

    /// The app's phase, with the data only that phase has: what a running app holds (its callback
    /// state, stay in the background, tasks and holds) does not exist when it does not run, and
    /// why it was last terminated does not exist while it runs.
    private enum Phase {
        /// Not running: the last termination (nil before the first launch).
        case notRunning(LastTermination?)
        /// Removed from its system for good: it accepts no transition. The last termination, as
        /// for ``notRunning(_:)``: its release may still be pending.
        case unregistered(LastTermination?)
        /// Inactive, active, in the background or suspended.
        case running(Running)
    }

    /// What a stopped app keeps of its last termination until it launches again.
    private struct LastTermination {
        /// Why the app was terminated.
        var reason: TerminationReason
        /// The termination, which calls that join it find until the next launch.
        var termination: AppTermination
        /// Whether its release of the app's view controllers and per-launch delegate is yet to be
        /// queued on the run loop: by the owner once the `terminated` event is delivered (the
        /// system's bookkeeping measures the app before anything is let go), or by a relaunch asked
        /// for first, ahead of its own steps.
        var releasePending: Bool
    }

    /// What a running app has.
    private struct Running {
        /// The state the system has moved the app to (its callbacks may still be queued).
        var state: AppState
        /// What `applicationState` reads while a delegate callback runs, as UIKit reports it
        /// (inactive while launching into the foreground, active in `willResignActive`,
        /// background in `willEnterForeground`, …); nil between callbacks, when the app reads
        /// ``state``.
        var callbackState: AppState?
        /// When the callback running now overruns, and the reason it then ends the app with; nil
        /// between callbacks and for one with no deadline.
        var callbackDeadline: CallbackDeadline?
        /// This stay in the background or suspended; nil in the foreground.
        var stay: BackgroundStay?
        /// The termination under way: `willTerminate` is queued or running.
        var termination: AppTermination?
        /// The `didEnterBackground` calls queued or running (the app can be brought back and sent
        /// to the background again before the first has run): the app must not suspend before the
        /// last returns.
        var backgroundEntriesUnderWay = 0
        /// The app's code the system runs now outside a lifecycle callback (an observer, a memory
        /// warning, an expiration handler, an eviction handler or discard callback): the app does
        /// not suspend while any runs, and the last to return suspends it if it should be by then.
        var suspensionHolds = 0
        /// The open background tasks' expiration handlers.
        var backgroundTasks: [BackgroundTaskIdentifier: ExpirationHandler] = [:]

        init(state: AppState) {
            self.state = state
        }
    }

    /// One stay in the background (suspended included), from its entry to the return to the
    /// foreground or the termination.
    private struct BackgroundStay {
        /// When the app entered the background: its background time is counted from here.
        let since: ContinuousClock.Instant
        /// Whether a timer ends the stay's background time (see ``BackgroundExpiryStep``): set as
        /// the machine asks its owner to arm one, and kept once it has fired.
        var isExpiryArmed = false
        /// Whether the expiration handlers have had their turn on the run loop: the expiry waits
        /// for it while the run loop only waits for a worker.
        var expirationHandlersBegan = false
    }

    /// A callback's deadline: the instant it overruns, and the termination's reason then.
    package struct CallbackDeadline: Sendable, Equatable {
        package var instant: ContinuousClock.Instant
        package var reason: TerminationReason

        package init(instant: ContinuousClock.Instant, reason: TerminationReason) {
            self.instant = instant
            self.reason = reason
        }
    }

    /// The app the machine's errors and events name.
    package let app: AppIdentifier
    /// What marks the app's background tasks as its own.
    let taskIssuer: Int
    /// One stay's background time (``AppConfiguration/backgroundTaskTimeLimit``).
    package let backgroundTaskTimeLimit: Duration
    /// Whether the app stays in the background once nothing keeps it running, never suspended by
    /// itself (a process app's `ProcessAppOptions.BackgroundMode.run`).
    package let keepsRunningInBackground: Bool

    private var phase = Phase.notRunning(nil)
    /// Incremented at each termination: run-loop work of an earlier generation does nothing.
    private(set) var generation = 0
    /// The next background task's number.
    private(set) var nextBackgroundTask = 1
    /// The options of the current (or last) launch.
    package private(set) var launchOptions = LaunchOptions()

    package init(app: AppIdentifier, taskIssuer: Int, backgroundTaskTimeLimit: Duration, keepsRunningInBackground: Bool) {
        self.app = app
        self.taskIssuer = taskIssuer
        self.backgroundTaskTimeLimit = backgroundTaskTimeLimit
        self.keepsRunningInBackground = keepsRunningInBackground
    }

    /// The running app's data; nil when it does not run.
    private var running: Running? {
        guard case .running(let running) = phase else { return nil }
        return running
    }

    /// The state the system has moved the app to (its callbacks may still be queued): what the
    /// system decides by.
    package var state: AppState { running?.state ?? .notRunning }
    /// What `applicationState` reads while a delegate callback runs; nil between callbacks.
    var callbackState: AppState? { running?.callbackState }
    /// When the app entered the background this time; nil in the foreground and when not running.
    var backgroundSince: ContinuousClock.Instant? { running?.stay?.since }
    /// Whether a timer ends this stay's background time.
    var isBackgroundExpiryArmed: Bool { running?.stay?.isExpiryArmed ?? false }
    /// `willTerminate` is queued or running.
    package var isTerminating: Bool { running?.termination != nil }
    /// The termination under way (`willTerminate` queued or running) or, while the app does not
    /// run, the last one; nil while it runs with none under way, and before its first launch.
    package var latestTermination: AppTermination? {
        switch phase {
        case .running(let running): running.termination
        case .notRunning(let last), .unregistered(let last): last?.termination
        }
    }
    /// The `didEnterBackground` calls queued or running.
    var backgroundEntriesUnderWay: Int { running?.backgroundEntriesUnderWay ?? 0 }
    /// The open background tasks' expiration handlers.
    var backgroundTasks: [BackgroundTaskIdentifier: ExpirationHandler] { running?.backgroundTasks ?? [:] }
    /// Why the app was last terminated, until it launches again.
    var terminationReason: TerminationReason? {
        guard case .notRunning(let last) = phase else { return nil }
        return last?.reason
    }

    /// ``state`` and ``callbackState`` in one word, as ``Action/publishStates(_:)`` publishes them.
    var publishedStates: UInt16 {
        PublishedStates.word(state: state, callbackState: callbackState)
    }

    /// The background time left in this stay at `now`; nil outside the background.
    func backgroundTimeRemaining(at now: ContinuousClock.Instant) -> Duration? {
        backgroundSince.map { max(.zero, backgroundTaskTimeLimit - (now - $0)) }
    }

    /// How long before the end of the background time the expiration handlers get their turn.
    private var expiryWarning: Duration {
        min(.seconds(1), backgroundTaskTimeLimit / 4)
    }
}

// MARK: Transitions the system asks for

extension LifecycleStateMachine {
    /// Launches from `notRunning`: to inactive, then active or (for a background event) background;
    /// the launch callbacks. A release left by the last termination goes first.
    package mutating func launch(options: LaunchOptions, now: ContinuousClock.Instant) throws(MemoryPressureError) -> [Action] {
        try validate(.launch, accepted: [.notRunning])
        guard case .notRunning(let last) = phase else { return [] }
        var options = options
        options.previousTermination = last?.reason
        launchOptions = options
        var actions: [Action] = [.openNotifications]
        actions += move(to: .inactive)
        // The last launch lets go of what it held before this one makes its delegate.
        var steps: [LifecycleStep] = []
        if let last, last.releasePending { steps.append(.releaseAfterTermination(last.termination)) }
        steps += [.makeDelegate, .callback(.willFinishLaunching), .callback(.didFinishLaunching)]
        if options.reason.launchesInBackground {
            let (moved, entry) = enterBackgroundSteps(now: now)
            actions += moved
            steps += entry
        } else {
            actions += move(to: .active)
            steps.append(.callback(.didBecomeActive))
        }
        return actions + [.run(steps, generation: generation)]
    }

    /// An interruption: active to inactive, `willResignActive`.
    package mutating func deactivate() throws(MemoryPressureError) -> [Action] {
        try validate(.deactivate, accepted: [.active])
        return move(to: .inactive) + [.run([.callback(.willResignActive)], generation: generation)]
    }

    /// The end of an interruption: inactive to active, `didBecomeActive`.
    package mutating func activate() throws(MemoryPressureError) -> [Action] {
        try validate(.activate, accepted: [.inactive])
        return move(to: .active) + [.run([.callback(.didBecomeActive)], generation: generation)]
    }

    /// Home: through inactive (`willResignActive` when active) to background,
    /// `didEnterBackground`, then suspension once it has returned if nothing keeps the app running.
    package mutating func enterBackground(now: ContinuousClock.Instant) throws(MemoryPressureError) -> [Action] {
        try validate(.enterBackground, accepted: [.active, .inactive])
        var actions: [Action] = []
        var steps: [LifecycleStep] = []
        if state == .active {
            actions += move(to: .inactive)
            steps.append(.callback(.willResignActive))
        }
        let (moved, entry) = enterBackgroundSteps(now: now)
        return actions + moved + [.run(steps + entry, generation: generation)]
    }

    /// Back to the foreground: `willEnterForeground`, the notifications queued while suspended (a
    /// suspended app's only), `didBecomeActive`.
    package mutating func enterForeground() throws(MemoryPressureError) -> [Action] {
        try validate(.enterForeground, accepted: [.background, .suspended])
        let wasSuspended = state == .suspended
        let actions = move(to: .inactive) + move(to: .active)
        guard wasSuspended else {
            return actions + [.run([.callback(.willEnterForeground), .callback(.didBecomeActive)], generation: generation)]
        }
        return actions + [
            .resumeNotifications(before: [.callback(.willEnterForeground)], after: [.callback(.didBecomeActive)], generation: generation)
        ]
    }

    /// Suspends a background app with no open task: now if nothing keeps it running, or, while
    /// `didEnterBackground` is under way, once the callbacks queued before have run.
    package mutating func suspend() throws(MemoryPressureError) -> [Action] {
        try validate(.suspend, accepted: [.background])
        guard backgroundTasks.isEmpty else {
            throw .backgroundTasksOpen(app: app, count: backgroundTasks.count)
        }
        guard backgroundEntriesUnderWay > 0 else {
            return suspendIfIdle() + [.run([], generation: generation)]
        }
        return [.run([.suspendIfIdle], generation: generation)]
    }

    /// Terminates for `reason` if the app is in one of `states`: a running app gets
    /// `willTerminate` first, a suspended one ends at once. The termination decided is made here
    /// (``latestTermination``).
    package mutating func terminate(reason: TerminationReason, from states: [AppState]) throws(MemoryPressureError) -> [Action] {
        try validate(.terminate, accepted: states)
        let generation = generation
        guard state != .suspended else {
            return end(reason: reason) + [.run([], generation: generation)]
        }
        updateRunning { $0.termination = AppTermination() }
        return [.run([.callback(.willTerminate), .terminate(reason)], generation: generation)]
    }
}

// MARK: What the app's run loop and timers report

extension LifecycleStateMachine {
    /// A delegate callback of `generation` begins, with its `deadline` if it has one: the state
    /// it reads.
    mutating func beginCallback(_ callback: LifecycleCallback, generation: Int, deadline: CallbackDeadline? = nil) -> [Action] {
        guard self.generation == generation else { return [] }
        let reported = callback.reportedState(launchingInBackground: launchOptions.reason.launchesInBackground)
        updateRunning { running in
            running.callbackState = reported
            running.callbackDeadline = deadline
        }
        return [.publishStates(publishedStates)]
    }

    /// A delegate callback of `generation` has returned at `now`: the app reads its state again.
    /// One that returned at or after its deadline overran it, and ends the app as the deadline's
    /// timer would have (whichever of the two comes first decides; the other finds nothing to do):
    /// an app never goes on, nor suspends, past a callback that overran.
    mutating func endCallback(generation: Int, now: ContinuousClock.Instant) -> [Action] {
        guard self.generation == generation else { return [] }
        let deadline = updateRunning { running in
            defer {
                running.callbackState = nil
                running.callbackDeadline = nil
            }
            return running.callbackDeadline
        } ?? nil
        if let deadline, now >= deadline.instant {
            return end(reason: deadline.reason)
        }
        return [.publishStates(publishedStates)]
    }

    /// The deadline of the callback of `generation` has passed while it still runs (its timer
    /// fired): the app ends with the deadline's reason. Nothing when the callback has returned
    /// (``endCallback(generation:now:)`` decided) or the app has ended since.
    mutating func callbackDeadlinePassed(generation: Int) -> [Action] {
        guard self.generation == generation, let deadline = running?.callbackDeadline else { return [] }
        return end(reason: deadline.reason)
    }

    /// One `didEnterBackground` of `generation` has returned: one entry fewer under way, then
    /// suspension if nothing keeps the app running.
    mutating func finishEnteringBackground(generation: Int) -> [Action] {
        guard self.generation == generation else { return [] }
        updateRunning { $0.backgroundEntriesUnderWay -= 1 }
        return suspendIfIdle()
    }

    /// Suspends the app if it is still in `generation` and nothing keeps it running.
    mutating func suspendIfIdle(generation: Int) -> [Action] {
        guard self.generation == generation else { return [] }
        return suspendIfIdle()
    }

    /// Holds off the suspension while the system runs some of the app's code; nil when the app
    /// runs no code, after queueing `notification`, if any, when it is suspended.
    package mutating func holdSuspension(orQueue notification: AppNotification?) -> (SuspensionHold?, [Action]) {
        guard state.isRunning else {
            guard state == .suspended, let notification else { return (nil, []) }
            return (nil, [.queueNotification(notification)])
        }
        updateRunning { $0.suspensionHolds += 1 }
        return (SuspensionHold(generation: generation), [])
    }

    /// Releases a hold: the last one suspends the app if it should be by then.
    package mutating func release(_ hold: SuspensionHold) -> [Action] {
        guard generation == hold.generation else { return [] }
        updateRunning { $0.suspensionHolds -= 1 }
        return suspendIfIdle()
    }

    /// Terminates at once, without a callback, if the app still runs `generation` (after
    /// `willTerminate`, or when a callback overran its deadline).
    mutating func terminateNow(reason: TerminationReason, generation: Int) -> [Action] {
        guard self.generation == generation, state != .notRunning else { return [] }
        return end(reason: reason)
    }

    /// Terminates at once, without a callback, whatever the app runs; nothing when not running.
    package mutating func endAtOnce(reason: TerminationReason) -> [Action] {
        guard state != .notRunning else { return [] }
        return end(reason: reason)
    }

    /// Takes the release a termination left pending, for the owner to queue: the termination
    /// released, once.
    mutating func takePendingRelease() -> AppTermination? {
        switch phase {
        case .notRunning(var last?) where last.releasePending:
            last.releasePending = false
            phase = .notRunning(last)
            return last.termination
        case .unregistered(var last?) where last.releasePending:
            last.releasePending = false
            phase = .unregistered(last)
            return last.termination
        default:
            return nil
        }
    }

    /// Removes the app from its system for good: from then on it accepts no transition. Only an
    /// app that is not running can be removed.
    package mutating func unregister() throws(MemoryPressureError) {
        try validate(.unregister, accepted: [.notRunning])
        guard case .notRunning(let last) = phase else { return }
        phase = .unregistered(last)
    }
}

// MARK: Background tasks and time

extension LifecycleStateMachine {
    /// Opens a background task, and arms the end of the background time if the app is in the
    /// background. Only a running app that is not terminating can open one.
    package mutating func beginBackgroundTask(
        expirationHandler: ExpirationHandler
    ) throws(MemoryPressureError) -> (BackgroundTaskIdentifier, [Action]) {
        try validate(.beginBackgroundTask, accepted: [.inactive, .active, .background])
        let task = BackgroundTaskIdentifier(rawValue: nextBackgroundTask, issuer: taskIssuer)
        nextBackgroundTask += 1
        updateRunning { $0.backgroundTasks[task] = expirationHandler }
        return (task, armBackgroundExpiryIfDue())
    }

    /// Ends a background task, and suspends the app if that was what kept it running. Returns the
    /// task's handler, for the owner to release after the lock: it may hold the last reference to
    /// anything.
    package mutating func endBackgroundTask(_ task: BackgroundTaskIdentifier) throws(MemoryPressureError) -> (ExpirationHandler, [Action]) {
        guard let ended = updateRunning({ $0.backgroundTasks.removeValue(forKey: task) }) ?? nil else {
            throw .unknownBackgroundTask(app: app, task, ofAnotherApp: task.issuer != taskIssuer)
        }
        return (ended, suspendIfIdle())
    }

    /// The background-time timer fired for `step` at `now`. At the warning, the expiration
    /// handlers get their turn on the run loop (whatever happened meanwhile: they check for
    /// themselves) and, unless the stay's expiry was disarmed, the end is armed at the limit, or
    /// `warning` after the handlers were posted if later (a busy machine). At the end, a task
    /// still open terminates the app (`backgroundTaskExpired`), unless the handlers have not had
    /// their turn and the run loop is not running the app's code (`runLoopRunsATurn`), but waits
    /// for a worker: then it waits another warning, up to ten times.
    mutating func backgroundExpiryDue(_ step: BackgroundExpiryStep, now: ContinuousClock.Instant, runLoopRunsATurn: Bool) -> [Action] {
        switch step {
        case .warn(let since, let stepGeneration):
            let handlers = Action.run([.runExpirationHandlers], generation: stepGeneration)
            guard generation == stepGeneration, backgroundSince == since, isBackgroundExpiryArmed else { return [handlers] }
            let end = max(since + backgroundTaskTimeLimit, now + expiryWarning)
            return [handlers, .armBackgroundExpiry(at: end, .end(since: since, generation: stepGeneration, extensionsLeft: 10))]
        case .end(let since, let stepGeneration, let extensionsLeft):
            guard generation == stepGeneration, state == .background, backgroundSince == since else { return [] }
            guard !backgroundTasks.isEmpty else {
                // Every task ended in time. A task the app opens later in this stay (while it still
                // runs: its code holds it, or it keeps running in the background) finds the time
                // used up: armed again, its expiration handler gets its turn at once.
                updateRunning { $0.stay?.isExpiryArmed = false }
                return []
            }
            if running?.stay?.expirationHandlersBegan != true, !runLoopRunsATurn, extensionsLeft > 0 {
                let next = BackgroundExpiryStep.end(since: since, generation: stepGeneration, extensionsLeft: extensionsLeft - 1)
                return [.armBackgroundExpiry(at: now + expiryWarning, next)]
            }
            return end(reason: .backgroundTaskExpired)
        }
    }

    /// The expiration handlers' turn on the run loop begins: the open tasks, oldest first, while
    /// the app is still in `generation` and in the background; none otherwise.
    mutating func beginExpirationHandlers(generation: Int) -> [(BackgroundTaskIdentifier, ExpirationHandler)] {
        guard self.generation == generation, state == .background else { return [] }
        return updateRunning { running in
            running.stay?.expirationHandlersBegan = true
            return running.backgroundTasks.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key, $0.value) }
        } ?? []
    }

    /// Whether `task`'s expiration handler should still run: the app is in `generation`, in the
    /// background, and the task open.
    func isExpirationHandlerDue(_ task: BackgroundTaskIdentifier, generation: Int) -> Bool {
        self.generation == generation && state == .background && backgroundTasks[task] != nil
    }
}

// MARK: Machinery

extension LifecycleStateMachine {
    /// Throws unless the app is in one of `accepted` and not terminating.
    private func validate(_ transition: LifecycleTransition, accepted: [AppState]) throws(MemoryPressureError) {
        if case .unregistered = phase {
            throw .appUnregistered(app: app, transition: transition)
        }
        guard accepted.contains(state) else {
            throw .invalidTransition(app: app, transition: transition, from: state, accepted: accepted)
        }
        guard !isTerminating else {
            throw .appTerminating(app: app, transition: transition)
        }
    }

    /// Runs `body` on the running app's data, changed in place; nil, and nothing changed, when the
    /// app does not run.
    @discardableResult
    private mutating func updateRunning<Result>(_ body: (inout Running) -> Result) -> Result? {
        guard case .running(var running) = phase else { return nil }
        // Out of `phase` while it changes, so that its tasks are not copied.
        phase = .notRunning(nil)
        defer { phase = .running(running) }
        return body(&running)
    }

    /// Moves the state (a launch starts the running app's data), publishing and reporting the
    /// change; leaving the background (other than for suspension) ends the stay.
    private mutating func move(to next: AppState) -> [Action] {
        let previous = state
        guard case .running = phase else {
            phase = .running(Running(state: next))
            return moved(from: previous, to: next, callbackState: nil, endingStay: nil)
        }
        let endedStay = updateRunning { running -> BackgroundStay? in
            running.state = next
            guard next != .background, next != .suspended else { return nil }
            defer { running.stay = nil }
            return running.stay
        } ?? nil
        return moved(from: previous, to: next, callbackState: callbackState, endingStay: endedStay)
    }

    /// The actions of a move from `previous` to `next`: the states published (with
    /// `callbackState`), the change reported, and the end of `endingStay`'s timer if one was armed.
    private func moved(from previous: AppState, to next: AppState, callbackState: AppState?, endingStay: BackgroundStay?) -> [Action] {
        var actions: [Action] = [
            .publishStates(PublishedStates.word(state: next, callbackState: callbackState)),
            .report(.stateChanged(app: app, from: previous, to: next)),
        ]
        if endingStay?.isExpiryArmed == true { actions.append(.cancelBackgroundExpiry) }
        return actions
    }

    /// Moves to the background, starting a stay's background time at `now`, and returns the steps
    /// of the entry: `didEnterBackground`, then its end.
    private mutating func enterBackgroundSteps(now: ContinuousClock.Instant) -> ([Action], [LifecycleStep]) {
        var actions = move(to: .background)
        updateRunning { running in
            if running.stay == nil { running.stay = BackgroundStay(since: now) }
            running.backgroundEntriesUnderWay += 1
        }
        actions += armBackgroundExpiryIfDue()
        return (actions, [.callback(.didEnterBackground), .finishEnteringBackground])
    }

    /// Arms the end of this stay's background time when the app is in the background with a task
    /// open and none is armed (see ``BackgroundExpiryStep``).
    private mutating func armBackgroundExpiryIfDue() -> [Action] {
        guard let running, running.state == .background, !running.backgroundTasks.isEmpty, let stay = running.stay,
              !stay.isExpiryArmed else { return [] }
        updateRunning { $0.stay?.isExpiryArmed = true }
        return [.armBackgroundExpiry(at: stay.since + backgroundTaskTimeLimit - expiryWarning, .warn(since: stay.since, generation: generation))]
    }

    /// Suspends the app if it is in the background with nothing to keep it running: no open
    /// background task, no `didEnterBackground` under way, no termination (a termination asked for
    /// meanwhile is not undone) and none of its code running; never an app that keeps running in
    /// the background.
    private mutating func suspendIfIdle() -> [Action] {
        guard !keepsRunningInBackground, let running, running.state == .background, running.backgroundTasks.isEmpty,
              running.backgroundEntriesUnderWay == 0, running.termination == nil, running.suspensionHolds == 0 else { return [] }
        return move(to: .suspended) + [.suspendNotifications]
    }

    /// Marks the app terminated: not running, a new generation, its timer cancelled, its tasks,
    /// observers and queued notifications dropped, the release of its objects queued behind the
    /// `terminated` event. The termination under way ends, or, when none is (a deadline, an
    /// expired task, an exit), one is made. Nothing when the app does not run.
    private mutating func end(reason: TerminationReason) -> [Action] {
        guard let running else { return [] }
        var actions = moved(from: running.state, to: .notRunning, callbackState: running.callbackState, endingStay: running.stay)
        let termination = running.termination ?? AppTermination()
        phase = .notRunning(LastTermination(reason: reason, termination: termination, releasePending: true))
        generation += 1
        actions.append(.publishStates(publishedStates))
        // The app's expiration handlers and observers are the app's code: whatever they hold is
        // released once the lock is.
        actions.append(.closeNotifications(dropping: Array(running.backgroundTasks.values)))
        actions.append(.report(.terminated(app: app, reason: reason, state: running.state)))
        actions.append(.queueRelease)
        return actions
    }
}

/// Actions compare when the expiration handlers do: what the machine's tests check its answers with.
extension LifecycleStateMachine.Action: Equatable where ExpirationHandler: Equatable {}
