import Jemalloc
import Synchronization

/// An app the system hosts: a unit of a service (a tenant, a session, a plugin) with UIKit's
/// lifecycle, delegate, view controllers, notifications and memory warnings.
///
/// ## Isolation
/// Each app is an actor whose executor is its own serial run loop (`AppRunLoop`). A custom global
/// actor would put every app on one executor, so an app needs an executor of its own. The delegate
/// and the view-controller tree are non-`Sendable` values stored in the actor, so region-based
/// isolation proves that only code isolated to this app touches them. The callbacks the system
/// posts (lifecycle steps, notifications, memory warnings) are queued on the same serial run loop as
/// the actor's jobs and entered with `assumeIsolated` (checked by the executor), and delegate
/// methods and observers take an `isolated App` parameter: they run one at a time, in posted order,
/// and never race one another. The run loops share a bounded pool of threads (`RunLoopPool`): an
/// app whose callback blocks holds one of them, and the pool grows past it, up to its bound.
///
/// The lifecycle record (state, background tasks, termination) sits beside the actor in a mutex, so
/// the system can validate a transition at once (a typed error changes nothing) and terminate an app
/// whose run loop is blocked by a callback overrunning its deadline. Swift cannot pre-empt that
/// callback: termination marks the app not running, cancels its timers, drops its observers and
/// queued work, and releases its view controllers once its run loop has drained. The state is also
/// published outside the mutex, so reading it never waits.
///
/// No code of a suspended app runs: observers, memory warnings and expiration handlers check, as
/// they begin, that the app runs code, and hold its suspension off until they return; so does a
/// purge that runs the app's eviction handlers or discard callbacks. A notification posted before
/// a suspension and not delivered by then is queued with those posted after it.
///
/// ## Transitions
/// The system moves an app with ``launch(options:)``, ``deactivate()``, ``activate()``,
/// ``enterBackground()``, ``enterForeground()``, ``suspend()`` and ``terminate(reason:)``. Each
/// validates the state, moves the app to its new state, queues its callbacks (see
/// ``LifecycleCallback``) and returns, once they have run or their deadline passed, the app's state
/// then.
///
/// Apps are made by ``MemorySystem/register(_:configuration:limits:makeDelegate:)``; see
/// <doc:TheAppLifecycle>.
public actor App {
    /// The app's name.
    public nonisolated let identifier: AppIdentifier
    /// The app's time limits and its importance band.
    public nonisolated let configuration: AppConfiguration

    nonisolated let runLoop: AppRunLoop
    nonisolated let record = Mutex(LifecycleRecord())
    /// The record's `state` and `callbackState`, published under its lock whenever either changes,
    /// so that reading the state never waits for the lock, whatever lock the reader holds.
    nonisolated let publishedStates = Atomic(LifecycleRecord().publishedStates)
    nonisolated let notificationRegistry = NotificationRegistry()
    /// What marks this app's background tasks as its own.
    nonisolated let backgroundTaskIssuer = BackgroundTaskIdentifier.newIssuer()
    nonisolated let events: EventSource<LifecycleEvent>?

    /// Where the app saves its state, and where its launches restore it from.
    package nonisolated let stateArchive: StateArchive?
    /// Whether the app stays in the background once nothing keeps it running, never suspended by
    /// itself, as if it held a background task without a time limit (a process app's
    /// ``ProcessAppOptions/BackgroundMode/run``).
    nonisolated let keepsRunningInBackground: Bool
    /// Makes a fresh delegate for each launch, for apps made with `init(identifier:…makeDelegate:)`.
    nonisolated let makeDelegate: (@Sendable () -> sending any AppDelegate)?

    /// The app's own code; nil between a termination and the next launch of an app that makes a
    /// fresh delegate for each launch.
    var delegate: (any AppDelegate)?

    /// When the current launch's callbacks began: the launch deadline counts from here.
    private var launchStart: ContinuousClock.Instant?

    /// The root of the app's view-controller tree; released when the app is terminated.
    public var rootViewController: ViewController?

    /// An app that is not running, with `delegate` as its code for every launch, outside any
    /// system: what the benchmarks measure an app's own cost with. Services register apps with
    /// ``MemorySystem``.
    @_spi(Benchmarks) public init(identifier: AppIdentifier, delegate: sending any AppDelegate, configuration: AppConfiguration = .default) {
        self.init(identifier: identifier, delegate: delegate, configuration: configuration, events: nil, stateArchive: nil)
    }

    /// An app that is not running, with `delegate` as its code for every launch, reporting to
    /// `events` and saving its state in `stateArchive` when given.
    package init(
        identifier: AppIdentifier,
        delegate: sending any AppDelegate,
        configuration: AppConfiguration = .default,
        events: EventSource<LifecycleEvent>?,
        stateArchive: StateArchive? = nil
    ) {
        self.identifier = identifier
        self.configuration = configuration
        self.events = events
        self.stateArchive = stateArchive
        self.keepsRunningInBackground = false
        self.makeDelegate = nil
        self.delegate = delegate
        self.runLoop = AppRunLoop()
    }

    /// An app that is not running and makes its code afresh for each launch, as a process would:
    /// `makeDelegate` runs on the app's run loop before `willFinishLaunching`, and the delegate,
    /// with everything only it holds, is released when the app is terminated.
    package init(
        identifier: AppIdentifier,
        configuration: AppConfiguration = .default,
        events: EventSource<LifecycleEvent>? = nil,
        stateArchive: StateArchive? = nil,
        keepsRunningInBackground: Bool = false,
        makeDelegate: @escaping @Sendable () -> sending any AppDelegate
    ) {
        self.identifier = identifier
        self.configuration = configuration
        self.events = events
        self.stateArchive = stateArchive
        self.keepsRunningInBackground = keepsRunningInBackground
        self.makeDelegate = makeDelegate
        self.delegate = nil
        self.runLoop = AppRunLoop()
    }

    /// The app's serial run loop, the executor every callback, observer and isolated method of the
    /// app runs on.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        runLoop.asUnownedSerialExecutor()
    }

    /// The app's state, as UIKit's `applicationState` reads it.
    ///
    /// Inside a delegate callback it reads what UIKit reports there: a launch into the foreground
    /// reads `inactive` in `willFinishLaunching` and `didFinishLaunching` and `active` in
    /// `didBecomeActive`; a launch into the background reads `background` throughout; going Home
    /// reads `active` in `willResignActive` and `background` in `didEnterBackground`; coming back
    /// reads `background` in `willEnterForeground` and `active` in `didBecomeActive`. Between
    /// callbacks it reads the state the system has moved the app to, which is also what the system
    /// decides by: a transition moves it at once, before its callbacks run.
    ///
    /// Reading it never waits: it can be read from any thread, under any lock (in a discard
    /// callback, say, which runs under its cache's lock).
    public nonisolated var state: AppState {
        let states = LifecycleRecord.states(published: publishedStates.load(ordering: .acquiring))
        return states.callbackState ?? states.state
    }

    /// The state the system has moved the app to, whatever callback runs: what the ladder, the
    /// warnings and the limits decide by. Reading it never waits, as ``state``.
    nonisolated var systemState: AppState {
        LifecycleRecord.states(published: publishedStates.load(ordering: .acquiring)).state
    }

    /// Publishes `record`'s states for ``state`` and ``systemState``. Called under the record's
    /// lock whenever either changes, before the change is reported.
    nonisolated func publishStates(of record: LifecycleRecord) {
        publishedStates.store(record.publishedStates, ordering: .releasing)
    }

    /// The background time left in this stay in the background, shared by every background task
    /// (``AppConfiguration/backgroundTaskTimeLimit``, counted from entering the background); nil
    /// while the app is in the foreground or not running, where no limit applies.
    public nonisolated var backgroundTimeRemaining: Duration? {
        withRecord { record in
            record.backgroundSince.map { max(.zero, configuration.backgroundTaskTimeLimit - (.now - $0)) }
        }
    }

    /// Why the app was last terminated, or nil when it is running or was never terminated.
    public nonisolated var terminationReason: TerminationReason? {
        withRecord { $0.terminationReason }
    }

    /// The options the app was launched with (the current or last launch).
    public nonisolated var launchOptions: LaunchOptions {
        withRecord { $0.launchOptions }
    }

    /// The app's notification center.
    public nonisolated var notificationCenter: AppNotificationCenter {
        AppNotificationCenter(app: self)
    }

    /// Queues `work` on the app's run loop, isolated to the app, after everything queued before;
    /// for the system's own steps, which check the app's launch themselves.
    nonisolated func enqueue(_ work: @escaping @Sendable (isolated App) -> Void) {
        runLoop.perform { self.assumeIsolated { app in work(app) } }
    }

    // MARK: Transitions

    /// Launches the app: `willFinishLaunching`, `didFinishLaunching`, then `didBecomeActive` in the
    /// foreground, or, for a background event, `didEnterBackground` and suspension when no
    /// background task is open. From `notRunning` only.
    ///
    /// When `options` carries no restored state and the app has a state archive, the state it saved
    /// last is restored into the options; an archive that cannot be read is reported (a
    /// ``LifecycleEvent/restorationFailed(app:_:)`` event and ``LaunchOptions/restorationFailure``)
    /// and the app launches fresh.
    ///
    /// - Parameter options: Why the app is launched, and the state to hand it; a user launch by
    ///   default.
    /// - Returns: The app's state once the launch callbacks have run: `active`, or, for a background
    ///   event, `suspended` (`background` while a background task is open or the system is still
    ///   running some of the app's code, `notRunning` when a callback overran its deadline).
    /// - Throws: ``MemoryPressureError`` with ``MemoryPressureError/Code/invalidTransition`` when
    ///   the app is running or suspended.
    @discardableResult
    public nonisolated func launch(options: LaunchOptions = LaunchOptions()) async throws(MemoryPressureError) -> AppState {
        let options = restoringState(into: options)
        return try await transition(.launch, accepted: [.notRunning]) { record in
            var options = options
            options.previousTermination = record.terminationReason
            record.launchOptions = options
            record.terminationReason = nil
            notificationRegistry.open()
            move(&record, to: .inactive)
            // The last launch lets go of what it held before this one makes its delegate.
            let release: [LifecycleStep] = record.releasePending ? [.releaseAfterTermination] : []
            record.releasePending = false
            let steps = release + [.makeDelegate, .callback(.willFinishLaunching), .callback(.didFinishLaunching)]
            if options.reason.launchesInBackground {
                return steps + enterBackgroundSteps(&record)
            }
            move(&record, to: .active)
            return steps + [.callback(.didBecomeActive)]
        }
    }

    /// An interruption: `willResignActive`, active to inactive.
    ///
    /// - Returns: The app's state once the callback has run: `inactive`, unless a later
    ///   transition has moved it on.
    /// - Throws: ``MemoryPressureError`` with ``MemoryPressureError/Code/invalidTransition`` when
    ///   the app is not active or is terminating.
    @discardableResult
    public nonisolated func deactivate() async throws(MemoryPressureError) -> AppState {
        try await transition(.deactivate, accepted: [.active]) { record in
            move(&record, to: .inactive)
            return [.callback(.willResignActive)]
        }
    }

    /// The end of an interruption: `didBecomeActive`, inactive to active.
    ///
    /// - Returns: The app's state once the callback has run: `active`, unless a later transition
    ///   has moved it on.
    /// - Throws: ``MemoryPressureError`` with ``MemoryPressureError/Code/invalidTransition`` when
    ///   the app is not inactive or is terminating.
    @discardableResult
    public nonisolated func activate() async throws(MemoryPressureError) -> AppState {
        try await transition(.activate, accepted: [.inactive]) { record in
            move(&record, to: .active)
            return [.callback(.didBecomeActive)]
        }
    }

    /// Home, or another app comes forward: `willResignActive` (when active), `didEnterBackground`
    /// within its deadline, then suspension when no background task is open.
    ///
    /// - Returns: The app's state once the callbacks have run: `suspended`, `background` while a
    ///   background task is open or the system is still running some of the app's code (an
    ///   eviction handler, say: the app suspends when it returns), or `notRunning` when
    ///   `didEnterBackground` overran its deadline.
    /// - Throws: ``MemoryPressureError`` with ``MemoryPressureError/Code/invalidTransition`` when
    ///   the app is not active or inactive, or is terminating.
    @discardableResult
    public nonisolated func enterBackground() async throws(MemoryPressureError) -> AppState {
        try await transition(.enterBackground, accepted: [.active, .inactive]) { record in
            var steps: [LifecycleStep] = []
            if record.state == .active {
                move(&record, to: .inactive)
                steps.append(.callback(.willResignActive))
            }
            return steps + enterBackgroundSteps(&record)
        }
    }

    /// Back to the foreground: `willEnterForeground`, the notifications queued while suspended,
    /// `didBecomeActive`.
    ///
    /// - Returns: The app's state once the callbacks have run: `active`, unless a later transition
    ///   has moved it on.
    /// - Throws: ``MemoryPressureError`` with ``MemoryPressureError/Code/invalidTransition`` when
    ///   the app is not in the background or suspended, or is terminating.
    @discardableResult
    public nonisolated func enterForeground() async throws(MemoryPressureError) -> AppState {
        try await transition(.enterForeground, accepted: [.background, .suspended]) { record in
            let wasSuspended = record.state == .suspended
            move(&record, to: .inactive)
            move(&record, to: .active)
            guard wasSuspended else {
                return [.callback(.willEnterForeground), .callback(.didBecomeActive)]
            }
            return nil
        } resuming: { queued in
            [.callback(.willEnterForeground)] + queued.map(LifecycleStep.deliver) + [.callback(.didBecomeActive)]
        }
    }

    /// Suspends a background app with no open background task (the system does this on its own
    /// after `didEnterBackground` and after the last background task ends). No callback.
    ///
    /// Called while `didEnterBackground` is still queued or running, it suspends the app once the
    /// callback returns.
    ///
    /// - Returns: The app's state then: `suspended`, or `background` when `didEnterBackground`
    ///   opened a background task or the system is still running some of the app's code (it
    ///   suspends when that returns).
    /// - Throws: ``MemoryPressureError`` with ``MemoryPressureError/Code/invalidTransition`` when
    ///   the app is not in the background, is terminating, or has background tasks open.
    @discardableResult
    public nonisolated func suspend() async throws(MemoryPressureError) -> AppState {
        try await transition(.suspend, accepted: [.background]) { record throws(MemoryPressureError) in
            guard record.backgroundTasks.isEmpty else {
                throw .backgroundTasksOpen(app: identifier, count: record.backgroundTasks.count)
            }
            guard record.backgroundEntriesUnderWay > 0 else {
                suspendIfIdle(&record)
                return []
            }
            return [.suspendIfIdle]
        }
    }

    /// Terminates the app for `reason`. A running app gets `willTerminate` within its deadline
    /// (overrunning it changes the reason to `deadline`); a suspended app is terminated at once,
    /// without a callback.
    ///
    /// Returns once the app's run loop has let go of its view controllers and per-launch delegate,
    /// so the memory only they held is free, or once the termination deadline has passed again
    /// after `willTerminate` (a run loop still blocked by an overrunning callback lets go later).
    ///
    /// - Parameter reason: Why the app is terminated, as its record and its next launch report it.
    /// - Returns: The app's state then, `notRunning`.
    /// - Throws: ``MemoryPressureError`` with ``MemoryPressureError/Code/invalidTransition`` when
    ///   the app is not running or suspended, or is already being terminated.
    @discardableResult
    public nonisolated func terminate(reason: TerminationReason) async throws(MemoryPressureError) -> AppState {
        try await terminate(reason: reason, from: [.inactive, .active, .background, .suspended])
    }

    /// Terminates the app for `reason` only if it is in one of `states` now, checked and carried out
    /// under the app's lock: the system terminates an app for pressure only in the state it chose
    /// it in, however the calls interleave.
    @discardableResult
    nonisolated func terminate(reason: TerminationReason, from states: [AppState]) async throws(MemoryPressureError) -> AppState {
        // What the termination did is `notRunning`, whatever a relaunch has done since: the state
        // read after the wait could already be the next launch's.
        _ = try await transition(.terminate, accepted: states) { record in
            guard record.state != .suspended else {
                end(&record, reason: reason)
                return []
            }
            record.isTerminating = true
            return [.callback(.willTerminate), .terminate(reason)]
        }
        // The release is queued once the system has heard of the termination; then the run loop
        // lets go of the app's objects, and the system hears of that too.
        await eventsDelivered()
        await drained(within: configuration.terminationDeadline)
        await eventsDelivered()
        return .notRunning
    }

    // MARK: Machinery

    /// Validates the transition and, under the record's lock, lets `plan` move the state and return
    /// the steps to queue (nil: `resuming` makes them from the queued notifications); then waits for
    /// the steps to run (or a deadline to end them) and returns the state.
    private nonisolated func transition(
        _ transition: LifecycleTransition,
        accepted: [AppState],
        plan: (inout LifecycleRecord) throws(MemoryPressureError) -> [LifecycleStep]?,
        resuming: ([AppNotification]) -> [LifecycleStep] = { _ in [] }
    ) async throws(MemoryPressureError) -> AppState {
        // Resolved with the app's state as its steps end (or a deadline ends them): what the caller
        // gets, however late its task resumes (a later deadline may have moved the app by then).
        let completion = Completion<AppState>()
        try withRecord { record throws(MemoryPressureError) in
            guard accepted.contains(record.state) else {
                throw .invalidTransition(app: identifier, transition: transition, from: record.state, accepted: accepted)
            }
            guard !record.isTerminating else {
                throw .appTerminating(app: identifier, transition: transition)
            }
            let generation = record.generation
            if let steps = try plan(&record) {
                schedule(steps, generation: generation, completion: completion)
            } else {
                notificationRegistry.resume { queued in
                    schedule(resuming(queued), generation: generation, completion: completion)
                }
            }
        }
        let state = await completion.value
        await eventsDelivered()
        return state
    }

    private nonisolated func enterBackgroundSteps(_ record: inout LifecycleRecord) -> [LifecycleStep] {
        move(&record, to: .background)
        record.backgroundEntriesUnderWay += 1
        return [.callback(.didEnterBackground), .finishEnteringBackground]
    }

    /// Moves the state, publishing and reporting the change, and starts or ends the background time
    /// of a stay in the background. Called under the record's lock.
    nonisolated func move(_ record: inout LifecycleRecord, to next: AppState) {
        let previous = record.state
        record.state = next
        publishStates(of: record)
        report(.stateChanged(app: identifier, from: previous, to: next), in: &record)
        switch next {
        case .background:
            if record.backgroundSince == nil { record.backgroundSince = .now }
            armBackgroundExpiry(&record)
        case .suspended:
            break
        case .notRunning, .inactive, .active:
            record.backgroundSince = nil
            record.backgroundExpiry.map(DeadlineTimers.shared.cancel)
            record.backgroundExpiry = nil
        }
    }

    /// Arms the end of this stay's background time when the app is in the background with a task
    /// open and none is armed: shortly before the time runs out the open tasks' expiration handlers
    /// run on the run loop; when it has run out, a task still open terminates the app (reason
    /// `backgroundTaskExpired`), from outside the run loop, so a blocked run loop or handler cannot
    /// keep it alive. Called under the record's lock.
    nonisolated func armBackgroundExpiry(_ record: inout LifecycleRecord) {
        guard record.state == .background, !record.backgroundTasks.isEmpty, record.backgroundExpiry == nil,
              let since = record.backgroundSince else { return }
        let limit = configuration.backgroundTaskTimeLimit
        let warning = min(.seconds(1), limit / 4)
        let generation = record.generation
        record.backgroundExpiry = DeadlineTimers.shared.schedule(at: since + limit - warning) { [self] in
            enqueue { app in app.runExpirationHandlers(generation: generation) }
            // The handlers get their warning on the run loop even when this deadline ran late (a
            // busy machine): the end comes at the limit, or `warning` after they were posted if
            // later; unless this stay's expiry was disarmed meanwhile.
            withRecordFromTimer { record in
                guard record.generation == generation, record.backgroundSince == since, record.backgroundExpiry != nil else { return }
                record.backgroundExpiry = DeadlineTimers.shared.schedule(at: max(since + limit, .now + warning)) { [self] in
                    endExpiredStay(since: since, generation: generation, warning: warning, extensionsLeft: 10)
                }
            }
        }
    }

    /// Ends a stay in the background whose time has run out with a task still open: terminates the
    /// app (reason `backgroundTaskExpired`). If the expiration handlers have not had their turn
    /// because the run loop only waits for a worker (a busy machine), not because the app's own
    /// code holds it, the end waits another `warning`, up to `extensionsLeft` times; a run loop
    /// blocked by the app's code cannot keep it alive. On the deadline timers' thread.
    private nonisolated func endExpiredStay(since: ContinuousClock.Instant, generation: Int, warning: Duration, extensionsLeft: Int) {
        withRecordFromTimer { record in
            guard record.generation == generation, record.state == .background, !record.backgroundTasks.isEmpty else { return }
            if record.expirationHandlersBegan != since, !runLoop.isRunningATurn, extensionsLeft > 0 {
                record.backgroundExpiry = DeadlineTimers.shared.schedule(at: .now + warning) { [self] in
                    endExpiredStay(since: since, generation: generation, warning: warning, extensionsLeft: extensionsLeft - 1)
                }
                return
            }
            end(&record, reason: .backgroundTaskExpired)
        }
    }

    private nonisolated func schedule(_ steps: [LifecycleStep], generation: Int, completion: Completion<AppState>) {
        guard !steps.isEmpty else {
            completion.resolve(state)
            return
        }
        enqueue { app in
            app.run(steps, generation: generation, completion: completion)
        }
    }

    /// Whether the app is still in `generation` (not terminated since).
    nonisolated func isCurrent(_ generation: Int) -> Bool {
        withRecord { $0.generation == generation }
    }

    private func run(_ steps: [LifecycleStep], generation: Int, completion: Completion<AppState>) {
        for step in steps {
            guard isCurrent(generation) else { break }
            switch step {
            case .callback(let callback):
                call(callback, generation: generation, completion: completion)
            case .deliver(let notification):
                notificationRegistry.deliverUnlessSuspended(notification, in: self)
            case .finishEnteringBackground:
                finishEnteringBackground(generation: generation)
            case .suspendIfIdle:
                suspendIfIdle(generation: generation)
            case .terminate(let reason):
                terminateNow(reason: reason, generation: generation)
            case .makeDelegate:
                if delegate == nil, let makeDelegate { delegate = makeDelegate() }
            case .releaseAfterTermination:
                releaseAfterTermination()
            }
        }
        completion.resolve(state)
    }

    /// Calls the delegate. For a callback with a deadline, a timer off the run loop terminates the
    /// app (reason `deadline`) and releases the waiting transition if the callback overruns.
    private func call(_ callback: LifecycleCallback, generation: Int, completion: Completion<AppState>) {
        var timer: DeadlineTimers.Token?
        if let (limit, reason) = callback.deadline(in: configuration) {
            if callback == .willFinishLaunching { launchStart = .now }
            let deadline = (callback == .didFinishLaunching ? launchStart : nil).map { $0 + limit } ?? .now + limit
            timer = DeadlineTimers.shared.schedule(at: deadline) { [self] in
                terminateNow(reason: reason, generation: generation, fromTimer: true)
                completion.resolve(.notRunning)
            }
        }
        withRecord { record in
            guard record.generation == generation else { return }
            record.callbackState = callback.reportedState(launchingInBackground: record.launchOptions.reason.launchesInBackground)
            publishStates(of: record)
        }
        defer {
            timer.map(DeadlineTimers.shared.cancel)
            withRecord { record in
                record.callbackState = nil
                publishStates(of: record)
            }
        }
        report(.callback(app: identifier, callback))
        switch callback {
        case .willFinishLaunching: delegate?.willFinishLaunching(self, options: launchOptions)
        case .didFinishLaunching: delegate?.didFinishLaunching(self, options: launchOptions)
        case .didBecomeActive: delegate?.didBecomeActive(self)
        case .willResignActive: delegate?.willResignActive(self)
        case .didEnterBackground: delegate?.didEnterBackground(self)
        case .willEnterForeground: delegate?.willEnterForeground(self)
        case .willTerminate: delegate?.willTerminate(self)
        case .didReceiveMemoryWarning: preconditionFailure("memory warnings are delivered by receiveMemoryWarning")
        }
    }

    /// Ends one entry into the background once its `didEnterBackground` has returned, and suspends
    /// the app if nothing keeps it running: not another entry, queued since.
    nonisolated func finishEnteringBackground(generation: Int) {
        withRecord { record in
            guard record.generation == generation else { return }
            record.backgroundEntriesUnderWay -= 1
            suspendIfIdle(&record)
        }
    }

    /// Suspends the app if nothing keeps it running, if it is still in `generation`.
    nonisolated func suspendIfIdle(generation: Int) {
        withRecord { record in
            guard record.generation == generation else { return }
            suspendIfIdle(&record)
        }
    }

    /// Suspends the app if it is in the background with nothing to keep it running: no open
    /// background task, no `didEnterBackground` under way, no termination (a termination asked for
    /// meanwhile is not undone) and none of its code running (``holdSuspension(orQueue:)``); never
    /// an app that keeps running in the background. Called under the record's lock.
    nonisolated func suspendIfIdle(_ record: inout LifecycleRecord) {
        guard !keepsRunningInBackground, record.state == .background, record.backgroundTasks.isEmpty, record.backgroundEntriesUnderWay == 0,
              !record.isTerminating, record.suspensionHolds == 0 else { return }
        move(&record, to: .suspended)
        notificationRegistry.suspend()
    }

    /// Holds off the app's suspension while the system runs some of its code outside a lifecycle
    /// callback: an observer, a memory warning, an expiration handler (on its run loop), an eviction
    /// handler or a discard callback (on the thread that purges). Checked under the app's lock, so
    /// no code of a suspended app runs: returns nil when the app runs no code (suspended or not
    /// running), after queueing `notification`, if any, for its return when it is suspended.
    ///
    /// The app stays in its state (it may still move to the foreground, or be terminated) until
    /// the hold is released; the last release suspends it if it should be by then.
    nonisolated func holdSuspension(orQueue notification: AppNotification? = nil) -> SuspensionHold? {
        withRecord { record in
            guard record.state.isRunning else {
                if record.state == .suspended, let notification { notificationRegistry.queue(notification) }
                return nil
            }
            record.suspensionHolds += 1
            return SuspensionHold(generation: record.generation)
        }
    }

    /// Releases a hold from ``holdSuspension(orQueue:)``: the app suspends now if it should.
    nonisolated func release(_ hold: SuspensionHold) {
        withRecord { record in
            guard record.generation == hold.generation else { return }
            record.suspensionHolds -= 1
            suspendIfIdle(&record)
        }
    }

    /// Terminates the app at once, without a callback, if it is still in `generation`; from the
    /// deadline timers' thread (`fromTimer`), its events are delivered from a task.
    nonisolated func terminateNow(reason: TerminationReason, generation: Int, fromTimer: Bool = false) {
        let body = { (record: inout LifecycleRecord) in
            guard record.generation == generation, record.state != .notRunning else { return }
            self.end(&record, reason: reason)
        }
        if fromTimer { withRecordFromTimer(body) } else { withRecord(body) }
    }

    /// Terminates the app at once, without a callback, whatever it runs: for a process app whose
    /// process ended by itself or could not start. An app not running is left alone.
    nonisolated func endAtOnce(reason: TerminationReason) {
        withRecord { record in
            guard record.state != .notRunning else { return }
            end(&record, reason: reason)
        }
    }

    /// Releases what the terminated app held: its view controllers and, when it makes a delegate
    /// for each launch, its delegate.
    func releaseAfterTermination() {
        rootViewController = nil
        if makeDelegate != nil { delegate = nil }
        // What the app's objects freed sits in this thread's cache until flushed: give it back, so
        // the memory the termination freed is really free when the system measures.
        try? Jemalloc.flushThreadCache()
        report(.released(app: identifier))
    }

    /// Returns once everything posted to the app's run loop before this call has run (after a
    /// termination, once the app has let go of its view controllers and delegate), or once
    /// `timeout` has passed.
    nonisolated func drained(within timeout: Duration) async {
        let completion = Completion<Void>()
        runLoop.perform { completion.resolve(()) }
        _ = await completion.value(timeout: timeout, cancellable: false)
    }

    /// Marks the app terminated: not running, a new generation, timers cancelled, observers and
    /// queued notifications dropped (the observers and expiration handlers released after the
    /// lock), view controllers (and a per-launch delegate) released once the run loop reaches this
    /// point.
    /// Called under the record's lock.
    private nonisolated func end(_ record: inout LifecycleRecord, reason: TerminationReason) {
        let state = record.state
        move(&record, to: .notRunning)
        record.generation += 1
        record.isTerminating = false
        record.backgroundEntriesUnderWay = 0
        record.suspensionHolds = 0
        record.terminationReason = reason
        record.callbackState = nil
        publishStates(of: record)
        // The app's expiration handlers and observers are the app's code: whatever they hold is
        // released once the lock is, by the outbox.
        let handlers = record.backgroundTasks.values.map(\.expirationHandler)
        record.backgroundTasks = [:]
        record.outbox.add(.drop(handlers + notificationRegistry.close()))
        report(.terminated(app: identifier, reason: reason, state: state), in: &record)
        record.releasePending = true
        record.outbox.add(.release)
    }
}
