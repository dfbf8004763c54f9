import Jemalloc
import Synchronization
@_spi(Benchmarks) import MemoryPressureRuntime

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
/// The lifecycle (state, background tasks, termination) is a value, a `LifecycleStateMachine`,
/// beside the actor in a mutex: its transitions return the actions that carry them out, which the
/// app carries out under the lock (see `App+Lifecycle.swift`). So the system can validate a
/// transition at once (a typed error changes nothing) and terminate an app whose run loop is
/// blocked by a callback overrunning its deadline. Swift cannot pre-empt that callback: termination
/// marks the app not running, cancels its timers, drops its observers and queued work, and releases
/// its view controllers once its run loop has drained. The state is also published outside the
/// mutex, so reading it never waits.
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
/// Apps are made by `MemorySystem.register(_:configuration:limits:makeDelegate:)`; see
/// “The App Lifecycle” in the MemoryPressure documentation.
public actor App {
    /// The app's name.
    public nonisolated let identifier: AppIdentifier
    /// The app's time limits and its importance band.
    public nonisolated let configuration: AppConfiguration

    nonisolated let runLoop: AppRunLoop
    /// The threads the app's run loop and deadlines run on: its system's.
    package nonisolated let threads: AppThreadGroup

    /// The time the app's deadlines and background time are read against: its group's.
    package nonisolated var clock: any LibraryClock { threads.timers.clock }
    package nonisolated let record: LibraryLock<LifecycleRecord>
    /// The lifecycle's `state` and `callbackState` (``PublishedStates``), published under the
    /// record's lock whenever either changes, so that reading the state never waits for the lock,
    /// whatever lock the reader holds.
    nonisolated let publishedStates = Atomic(PublishedStates.word(state: .notRunning, callbackState: nil))
    nonisolated let notificationRegistry = NotificationRegistry()
    package nonisolated let events: EventSource<LifecycleEvent>?
    /// The system that hosts the app, when one does: what it does at the lifecycle's own points.
    package nonisolated let host: (any AppHost)?

    /// Where the app saves its state, and where its launches restore it from.
    package nonisolated let stateArchive: StateArchive?
    /// Makes a fresh delegate for each launch, for apps made with `init(identifier:…makeDelegate:)`.
    package nonisolated let makeDelegate: (@Sendable () -> sending any AppDelegate)?

    /// The app's own code; nil between a termination and the next launch of an app that makes a
    /// fresh delegate for each launch.
    package var delegate: (any AppDelegate)?

    /// When the current launch's callbacks began: the launch deadline counts from here.
    private var launchStart: ContinuousClock.Instant?

    /// The root of the app's view-controller tree; released when the app is terminated.
    public var rootViewController: ViewController?

    /// An app that is not running, with `delegate` as its code for every launch, outside any
    /// system: what the benchmarks measure an app's own cost with. Services register apps with
    /// `MemorySystem`.
    @_spi(Benchmarks) public init(
        identifier: AppIdentifier, delegate: sending any AppDelegate, configuration: AppConfiguration = .default, threads: AppThreadGroup
    ) {
        self.init(identifier: identifier, delegate: delegate, configuration: configuration, events: nil, stateArchive: nil, threads: threads)
    }

    /// An app that is not running, with `delegate` as its code for every launch, reporting to
    /// `events` and saving its state in `stateArchive` when given.
    package init(
        identifier: AppIdentifier,
        delegate: sending any AppDelegate,
        configuration: AppConfiguration = .default,
        events: EventSource<LifecycleEvent>?,
        stateArchive: StateArchive? = nil,
        host: (any AppHost)? = nil,
        threads: AppThreadGroup
    ) {
        self.identifier = identifier
        self.configuration = configuration
        self.events = events
        self.host = host
        self.stateArchive = stateArchive
        self.makeDelegate = nil
        self.delegate = delegate
        self.threads = threads
        self.runLoop = AppRunLoop(pool: threads.pool)
        self.record = Self.record(identifier: identifier, configuration: configuration, keepsRunningInBackground: false)
    }

    /// An app that is not running and makes its code afresh for each launch, as a process would:
    /// `makeDelegate` runs on the app's run loop before `willFinishLaunching`, and the delegate,
    /// with everything only it holds, is released when the app is terminated.
    package init(
        identifier: AppIdentifier,
        configuration: AppConfiguration = .default,
        events: EventSource<LifecycleEvent>? = nil,
        stateArchive: StateArchive? = nil,
        host: (any AppHost)? = nil,
        threads: AppThreadGroup,
        keepsRunningInBackground: Bool = false,
        makeDelegate: @escaping @Sendable () -> sending any AppDelegate
    ) {
        self.identifier = identifier
        self.configuration = configuration
        self.events = events
        self.host = host
        self.stateArchive = stateArchive
        self.makeDelegate = makeDelegate
        self.delegate = nil
        self.threads = threads
        self.runLoop = AppRunLoop(pool: threads.pool)
        self.record = Self.record(identifier: identifier, configuration: configuration, keepsRunningInBackground: keepsRunningInBackground)
    }

    /// The record of a new app, not running. Its lifecycle keeps the app running in the background
    /// once nothing else does when `keepsRunningInBackground` (a process app's
    /// `ProcessAppOptions.BackgroundMode.run`), as if it held a background task without a time
    /// limit.
    private static func record(identifier: AppIdentifier, configuration: AppConfiguration, keepsRunningInBackground: Bool) -> LibraryLock<LifecycleRecord> {
        LibraryLock(LifecycleRecord(machine: Lifecycle(
            app: identifier, taskIssuer: BackgroundTaskIdentifier.newIssuer(),
            backgroundTaskTimeLimit: configuration.backgroundTaskTimeLimit, keepsRunningInBackground: keepsRunningInBackground
        )))
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
    /// Reading it never waits: it can be read from any thread, under any lock (a lock of the
    /// service's own, say, held while it decides what to drop).
    public nonisolated var state: AppState {
        let states = PublishedStates.states(publishedStates.load(ordering: .acquiring))
        return states.callbackState ?? states.state
    }

    /// The state the system has moved the app to, whatever callback runs: what the ladder, the
    /// warnings and the limits decide by. Reading it never waits, as ``state``.
    package nonisolated var systemState: AppState {
        PublishedStates.states(publishedStates.load(ordering: .acquiring)).state
    }

    /// The background time left in this stay in the background, shared by every background task
    /// (``AppConfiguration/backgroundTaskTimeLimit``, counted from entering the background); nil
    /// while the app is in the foreground or not running, where no limit applies.
    public nonisolated var backgroundTimeRemaining: Duration? {
        withRecord { $0.machine.backgroundTimeRemaining(at: clock.now) }
    }

    /// Why the app was last terminated, or nil when it is running or was never terminated.
    public nonisolated var terminationReason: TerminationReason? {
        withRecord { $0.machine.terminationReason }
    }

    /// The options the app was launched with (the current or last launch).
    public nonisolated var launchOptions: LaunchOptions {
        withRecord { $0.machine.launchOptions }
    }

    /// The app's notification center.
    public nonisolated var notificationCenter: AppNotificationCenter {
        AppNotificationCenter(app: self)
    }

    /// Queues `work` on the app's run loop, isolated to the app, after everything queued before;
    /// for the system's own steps, which check the app's launch themselves.
    package nonisolated func enqueue(_ work: @escaping @Sendable (isolated App) -> Void) {
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
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidTransition`` when
    ///   the app is running or suspended.
    @discardableResult
    public nonisolated func launch(options: LaunchOptions = LaunchOptions()) async throws(MemoryPressureError) -> AppState {
        let options = restoringState(into: options)
        return try await transition { machine throws(MemoryPressureError) in try machine.launch(options: options, now: clock.now) }
    }

    /// An interruption: `willResignActive`, active to inactive.
    ///
    /// - Returns: The app's state once the callback has run: `inactive`, unless a later
    ///   transition has moved it on.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidTransition`` when
    ///   the app is not active or is terminating.
    @discardableResult
    public nonisolated func deactivate() async throws(MemoryPressureError) -> AppState {
        try await transition { machine throws(MemoryPressureError) in try machine.deactivate() }
    }

    /// The end of an interruption: `didBecomeActive`, inactive to active.
    ///
    /// - Returns: The app's state once the callback has run: `active`, unless a later transition
    ///   has moved it on.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidTransition`` when
    ///   the app is not inactive or is terminating.
    @discardableResult
    public nonisolated func activate() async throws(MemoryPressureError) -> AppState {
        try await transition { machine throws(MemoryPressureError) in try machine.activate() }
    }

    /// Home, or another app comes forward: `willResignActive` (when active), `didEnterBackground`
    /// within its deadline, then suspension when no background task is open.
    ///
    /// - Returns: The app's state once the callbacks have run: `suspended`, `background` while a
    ///   background task is open or the system is still running some of the app's code (an
    ///   eviction handler, say: the app suspends when it returns), or `notRunning` when
    ///   `didEnterBackground` overran its deadline.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidTransition`` when
    ///   the app is not active or inactive, or is terminating.
    @discardableResult
    public nonisolated func enterBackground() async throws(MemoryPressureError) -> AppState {
        try await transition { machine throws(MemoryPressureError) in try machine.enterBackground(now: clock.now) }
    }

    /// Back to the foreground: `willEnterForeground`, the notifications queued while suspended,
    /// `didBecomeActive`.
    ///
    /// - Returns: The app's state once the callbacks have run: `active`, unless a later transition
    ///   has moved it on.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidTransition`` when
    ///   the app is not in the background or suspended, or is terminating.
    @discardableResult
    public nonisolated func enterForeground() async throws(MemoryPressureError) -> AppState {
        try await transition { machine throws(MemoryPressureError) in try machine.enterForeground() }
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
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidTransition`` when
    ///   the app is not in the background, is terminating, or has background tasks open.
    @discardableResult
    public nonisolated func suspend() async throws(MemoryPressureError) -> AppState {
        try await transition { machine throws(MemoryPressureError) in try machine.suspend() }
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
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidTransition`` when
    ///   the app is not running or suspended, or is already being terminated.
    @discardableResult
    public nonisolated func terminate(reason: TerminationReason) async throws(MemoryPressureError) -> AppState {
        let termination = try beginTermination(reason: reason, from: [.inactive, .active, .background, .suspended])
        await end(of: termination)
        // What the termination did is `notRunning`, whatever a relaunch has done since: the state
        // read after the wait could already be the next launch's.
        return .notRunning
    }

    /// Asks the lifecycle to terminate the app for `reason`, only if it is in one of `states` now,
    /// checked and carried out under the app's lock (the system terminates an app for pressure only
    /// in the state it chose it in, however the calls interleave), and returns the termination it
    /// decided, for ``end(of:)``. `part`, when given, is the host's part of the termination
    /// (``AppTermination/part(orMake:)``), kept before anything of the termination is delivered.
    ///
    /// - Throws: As ``terminate(reason:)``: the app is not in one of `states`, or is terminating.
    package nonisolated func beginTermination(
        reason: TerminationReason, from states: [AppState], recordingIn part: (any AnyObject & Sendable)? = nil
    ) throws(MemoryPressureError) -> AppTermination {
        try withRecord { record throws(MemoryPressureError) in
            let actions = try record.machine.terminate(reason: reason, from: states)
            // Made by the machine just now: under way, or (a suspended app's) ended already.
            guard let termination = record.machine.latestTermination else { preconditionFailure("a termination decided and not kept") }
            part.map(termination.keep)
            carryOut(actions, on: &record, completion: termination.callbacksEnded)
            return termination
        }
    }

    /// Returns once `termination`, begun by ``beginTermination(reason:from:recordingIn:)``, has
    /// ended the app and its run loop has let go of the app's view controllers and per-launch
    /// delegate, so the memory only they held is free; or once the termination deadline has passed
    /// again after `willTerminate` (a run loop still blocked by an overrunning callback lets go
    /// later).
    package nonisolated func end(of termination: AppTermination) async {
        _ = await termination.callbacksEnded.value
        // The release is queued once the system has heard of the termination; then the run loop
        // lets go of the app's objects, and the system hears of that too.
        await eventsDelivered()
        await drained(within: configuration.terminationDeadline)
        await eventsDelivered()
    }

    /// The termination under way (`willTerminate` queued or running) or, while the app does not
    /// run, its last one: what a call that finds the app being terminated joins.
    package nonisolated var latestTermination: AppTermination? {
        withRecord { $0.machine.latestTermination }
    }

    /// Removes the app from its system for good: from then on every transition throws. Checked
    /// and made under the app's lock, so that no launch can slip in between.
    ///
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidTransition`` when
    ///   the app runs, is suspended, or was removed already.
    package nonisolated func unregister() throws(MemoryPressureError) {
        try withRecord { record throws(MemoryPressureError) in try record.machine.unregister() }
    }

    // MARK: Machinery

    /// Lets `decide` validate and make a transition of the lifecycle under the record's lock,
    /// carries out its actions there, then waits for the steps it queued to run (or a deadline to
    /// end them) and returns the state.
    private nonisolated func transition(
        _ decide: (inout Lifecycle) throws(MemoryPressureError) -> [Lifecycle.Action]
    ) async throws(MemoryPressureError) -> AppState {
        // Resolved with the app's state as its steps end (or a deadline ends them): what the caller
        // gets, however late its task resumes (a later deadline may have moved the app by then).
        let completion = Completion<AppState>()
        try withRecord { record throws(MemoryPressureError) in
            carryOut(try decide(&record.machine), on: &record, completion: completion)
        }
        let state = await completion.value
        await eventsDelivered()
        return state
    }

    /// Whether the app is still in `generation` (not terminated since).
    nonisolated func isCurrent(_ generation: Int) -> Bool {
        withRecord { $0.machine.generation == generation }
    }

    /// Runs `steps` in order while the app is in `generation`, then resolves `completion` with the
    /// app's state.
    package func run(_ steps: [LifecycleStep], generation: Int, completion: Completion<AppState>?) {
        for step in steps {
            guard isCurrent(generation) else { break }
            switch step {
            case .callback(let callback):
                call(callback, generation: generation, completion: completion)
            case .deliver(let notification):
                notificationRegistry.deliverUnlessSuspended(notification, in: self)
            case .finishEnteringBackground:
                // What the host reclaims of the entry, the app's discard callbacks among it, is
                // done before the entry ends, and so before the app can suspend.
                callOut { host?.appEnteredBackground(self) }
                finishEnteringBackground(generation: generation)
            case .suspendIfIdle:
                suspendIfIdle(generation: generation)
            case .terminate(let reason):
                terminateNow(reason: reason, generation: generation)
            case .makeDelegate:
                if delegate == nil, let makeDelegate { delegate = callOut(makeDelegate) }
            case .releaseAfterTermination(let termination):
                releaseAfterTermination(termination)
            case .runExpirationHandlers:
                runExpirationHandlers(generation: generation)
            }
        }
        completion?.resolve(state)
    }

    /// Calls the delegate. For a callback with a deadline, a timer off the run loop terminates the
    /// app (reason `deadline`) and releases the waiting transition if the callback overruns.
    private func call(_ callback: LifecycleCallback, generation: Int, completion: Completion<AppState>?) {
        var deadline: Lifecycle.CallbackDeadline?
        if let (limit, reason) = callback.deadline(in: configuration) {
            let now = clock.now
            if callback == .willFinishLaunching { launchStart = now }
            let instant = (callback == .didFinishLaunching ? launchStart : nil).map { $0 + limit } ?? now + limit
            deadline = Lifecycle.CallbackDeadline(instant: instant, reason: reason)
        }
        update { $0.beginCallback(callback, generation: generation, deadline: deadline) }
        // Armed once the machine knows the deadline, which decides against the callback's return.
        let timer = deadline.map { deadline in
            threads.timers.schedule(at: deadline.instant) { [self] in
                if callbackDeadlinePassed(generation: generation) { completion?.resolve(.notRunning) }
            }
        }
        defer {
            timer.map(threads.timers.cancel)
            update { $0.endCallback(generation: generation, now: clock.now) }
        }
        report(.callback(app: identifier, callback))
        callOut {
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
    }

    /// Ends one entry into the background once its `didEnterBackground` has returned, and suspends
    /// the app if nothing keeps it running: not another entry, queued since.
    nonisolated func finishEnteringBackground(generation: Int) {
        update { $0.finishEnteringBackground(generation: generation) }
    }

    /// Suspends the app if nothing keeps it running, if it is still in `generation`.
    nonisolated func suspendIfIdle(generation: Int) {
        update { $0.suspendIfIdle(generation: generation) }
    }

    /// Holds off the app's suspension while the system runs some of its code outside a lifecycle
    /// callback: an observer, a memory warning, an expiration handler (on its run loop), an eviction
    /// handler or a discard callback (on the thread that purges). Checked under the app's lock, so
    /// no code of a suspended app runs: returns nil when the app runs no code (suspended or not
    /// running), after queueing `notification`, if any, for its return when it is suspended.
    ///
    /// The app stays in its state (it may still move to the foreground, or be terminated) until
    /// the hold is released; the last release suspends it if it should be by then.
    package nonisolated func holdSuspension(orQueue notification: AppNotification? = nil) -> SuspensionHold? {
        withRecord { record in
            let (hold, actions) = record.machine.holdSuspension(orQueue: notification)
            carryOut(actions, on: &record)
            return hold
        }
    }

    /// Releases a hold from ``holdSuspension(orQueue:)``: the app suspends now if it should.
    package nonisolated func release(_ hold: SuspensionHold) {
        update { $0.release(hold) }
    }

    /// Terminates the app at once, without a callback, if it is still in `generation`.
    nonisolated func terminateNow(reason: TerminationReason, generation: Int) {
        update { $0.terminateNow(reason: reason, generation: generation) }
    }

    /// From the deadline timers' thread: the running callback of `generation` overran its
    /// deadline, and the app ends, unless the callback returned first. Its events are delivered
    /// from a worker. Returns whether the app ended.
    private nonisolated func callbackDeadlinePassed(generation: Int) -> Bool {
        withRecordFromTimer { record in
            let actions = record.machine.callbackDeadlinePassed(generation: generation)
            carryOut(actions, on: &record)
            return !actions.isEmpty
        }
    }

    /// Terminates the app at once, without a callback, whatever it runs: for a process app whose
    /// process ended by itself or could not start. An app not running is left alone.
    package nonisolated func endAtOnce(reason: TerminationReason) {
        update { $0.endAtOnce(reason: reason) }
    }

    /// Releases what the app held as `termination` ended it: its view controllers and, when it
    /// makes a delegate for each launch, its delegate.
    func releaseAfterTermination(_ termination: AppTermination) {
        rootViewController = nil
        if makeDelegate != nil { delegate = nil }
        // What the app's objects freed sits in this thread's cache until flushed: give it back, so
        // the memory the termination freed is really free when the system measures.
        try? Jemalloc.flushThreadCache()
        report(.released(app: identifier), of: termination)
    }

    /// Returns once everything posted to the app's run loop before this call has run (after a
    /// termination, once the app has let go of its view controllers and delegate), or once
    /// `timeout` has passed.
    nonisolated func drained(within timeout: Duration) async {
        let completion = Completion<Void>()
        runLoop.perform { completion.resolve(()) }
        _ = await completion.value(timeout: timeout, on: threads.timers, cancellable: false)
    }
}
