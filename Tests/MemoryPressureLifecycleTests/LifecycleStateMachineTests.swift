@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
import Testing

/// The lifecycle's state machine on its own: pure, so each test steps it by hand, on one thread,
/// with no clock, timer or app, and checks the actions each transition returns. The apps' own
/// tests check that `App` carries the actions out; these check the decisions.
@Suite struct LifecycleStateMachineTests {
    /// A machine whose expiration handlers are numbers, so that actions compare.
    typealias Machine = LifecycleStateMachine<Int>

    let app = try! AppIdentifier("machine")
    /// The start of a stay in the background, as a transition is handed it.
    let now = ContinuousClock.now
    /// The machine's background time limit; its expiration handlers get a warning of 1 s.
    let limit = Duration.seconds(30)

    func makeMachine(keepsRunningInBackground: Bool = false) -> Machine {
        Machine(app: app, taskIssuer: 7, backgroundTaskTimeLimit: limit, keepsRunningInBackground: keepsRunningInBackground)
    }

    /// The actions of a move from `from` to `to`, with no background time to start or end.
    func moved(_ from: AppState, _ to: AppState) -> [Machine.Action] {
        [.publishStates(PublishedStates.word(state: to, callbackState: nil)), .report(.stateChanged(app: app, from: from, to: to))]
    }

    /// A machine launched into the background and suspended, `didEnterBackground` having returned.
    func suspendedMachine() throws -> Machine {
        var machine = makeMachine()
        _ = try machine.launch(options: LaunchOptions(reason: .backgroundEvent("fetch")), now: now)
        _ = machine.finishEnteringBackground(generation: 0)
        #expect(machine.state == .suspended)
        return machine
    }

    @Test func aForegroundLaunchFromNotRunningQueuesItsCallbacksAndReportsItsMoves() throws {
        var machine = makeMachine()
        let actions = try machine.launch(options: LaunchOptions(), now: now)
        #expect(actions == [.openNotifications] + moved(.notRunning, .inactive) + moved(.inactive, .active) + [
            .run([.makeDelegate, .callback(.willFinishLaunching), .callback(.didFinishLaunching), .callback(.didBecomeActive)], generation: 0)
        ])
        #expect(machine.state == .active)
        #expect(machine.backgroundSince == nil)
        #expect(machine.launchOptions == LaunchOptions())
    }

    @Test func aBackgroundLaunchStartsTheStayAndSuspendsOnceDidEnterBackgroundHasReturned() throws {
        var machine = makeMachine()
        let actions = try machine.launch(options: LaunchOptions(reason: .backgroundEvent("fetch")), now: now)
        #expect(actions == [.openNotifications] + moved(.notRunning, .inactive) + moved(.inactive, .background) + [
            .run([
                .makeDelegate, .callback(.willFinishLaunching), .callback(.didFinishLaunching),
                .callback(.didEnterBackground), .finishEnteringBackground,
            ], generation: 0)
        ])
        #expect(machine.backgroundSince == now)
        #expect(machine.backgroundTimeRemaining(at: now + .seconds(10)) == .seconds(20))
        // The launch callbacks read `background` throughout.
        let reading = machine.beginCallback(.willFinishLaunching, generation: 0)
        #expect(reading == [
            .publishStates(PublishedStates.word(state: .background, callbackState: .background))
        ])
        let readingDone = machine.endCallback(generation: 0, now: now)
        #expect(readingDone == [.publishStates(PublishedStates.word(state: .background, callbackState: nil))])
        let entered = machine.finishEnteringBackground(generation: 0)
        #expect(entered == moved(.background, .suspended) + [.suspendNotifications])
        #expect(machine.state == .suspended)
    }

    /// `didEnterBackground` overruns its deadline: its timer fires, and the callback returns (a
    /// process app's wait for its child's answer times out), at the same instant, in either order.
    /// Whichever comes first ends the app with `deadline`, once; the other, and the entry's end
    /// after it, find nothing to do: the app never suspends past an unanswered callback.
    @Test(arguments: [true, false])
    func aCallbackDeadlineAndItsReturnAtTheSameInstantEndTheAppOnce(timerFirst: Bool) throws {
        var machine = makeMachine()
        _ = try machine.launch(options: LaunchOptions(), now: now)
        _ = try machine.enterBackground(now: now)
        let deadline = Machine.CallbackDeadline(instant: now + .seconds(5), reason: .deadline)
        _ = machine.beginCallback(.didEnterBackground, generation: 0, deadline: deadline)
        let returned = { (machine: inout Machine) in machine.endCallback(generation: 0, now: deadline.instant) }
        let first = timerFirst ? machine.callbackDeadlinePassed(generation: 0) : returned(&machine)
        let second = timerFirst ? returned(&machine) : machine.callbackDeadlinePassed(generation: 0)
        #expect(first.contains(.report(.terminated(app: app, reason: .deadline, state: .background))))
        #expect(second.isEmpty)
        #expect(machine.finishEnteringBackground(generation: 0).isEmpty)
        #expect(machine.state == .notRunning)
        #expect(machine.terminationReason == .deadline)
    }

    /// A callback that returns before its deadline goes on as usual, and its timer, late, finds
    /// nothing to end.
    @Test func aCallbackThatReturnsBeforeItsDeadlineGoesOnAndItsLateTimerEndsNothing() throws {
        var machine = makeMachine()
        _ = try machine.launch(options: LaunchOptions(), now: now)
        _ = try machine.enterBackground(now: now)
        let deadline = Machine.CallbackDeadline(instant: now + .seconds(5), reason: .deadline)
        _ = machine.beginCallback(.didEnterBackground, generation: 0, deadline: deadline)
        let returned = machine.endCallback(generation: 0, now: deadline.instant - .nanoseconds(1))
        #expect(returned == [.publishStates(PublishedStates.word(state: .background, callbackState: nil))])
        #expect(machine.callbackDeadlinePassed(generation: 0).isEmpty)
        #expect(machine.finishEnteringBackground(generation: 0) == moved(.background, .suspended) + [.suspendNotifications])
        #expect(machine.state == .suspended)
    }

    @Test func anInvalidTransitionThrowsAndChangesNothing() throws {
        var machine = makeMachine()
        #expect(throws: MemoryPressureError.invalidTransition(app: app, transition: .activate, from: .notRunning, accepted: [.inactive])) {
            try machine.activate()
        }
        #expect(throws: MemoryPressureError.invalidTransition(
            app: app, transition: .beginBackgroundTask, from: .notRunning, accepted: [.inactive, .active, .background]
        )) {
            try machine.beginBackgroundTask(expirationHandler: 1)
        }
        #expect(machine.state == .notRunning)
        #expect(machine.publishedStates == PublishedStates.word(state: .notRunning, callbackState: nil))
        #expect(machine.backgroundTasks.isEmpty)
        #expect(machine.nextBackgroundTask == 1)

        _ = try machine.launch(options: LaunchOptions(), now: now)
        _ = try machine.enterBackground(now: now)
        #expect(throws: MemoryPressureError.invalidTransition(app: app, transition: .activate, from: .background, accepted: [.inactive])) {
            try machine.activate()
        }
        #expect(machine.state == .background)
        #expect(machine.backgroundEntriesUnderWay == 1)
    }

    @Test func nothingMovesAnAppOutOfItsTermination() throws {
        var machine = makeMachine()
        _ = try machine.launch(options: LaunchOptions(), now: now)
        let terminated = try machine.terminate(reason: .explicit, from: [.active])
        #expect(terminated == [
            .run([.callback(.willTerminate), .terminate(.explicit)], generation: 0)
        ])
        #expect(machine.isTerminating)
        #expect(throws: MemoryPressureError.appTerminating(app: app, transition: .deactivate)) { try machine.deactivate() }
        #expect(throws: MemoryPressureError.appTerminating(app: app, transition: .beginBackgroundTask)) {
            try machine.beginBackgroundTask(expirationHandler: 1)
        }
        #expect(machine.state == .active)
        // After willTerminate.
        let ended = machine.terminateNow(reason: .explicit, generation: 0)
        #expect(ended.contains(.report(.terminated(app: app, reason: .explicit, state: .active))))
        #expect(machine.state == .notRunning)
        #expect(!machine.isTerminating)
    }

    @Test func aTerminationIsOneObjectFromItsDecisionToTheNextLaunch() throws {
        var machine = makeMachine()
        _ = try machine.launch(options: LaunchOptions(), now: now)
        #expect(machine.latestTermination == nil)
        _ = try machine.terminate(reason: .explicit, from: [.active])
        let decided = try #require(machine.latestTermination)
        // After willTerminate: the termination that ends the app is the one decided.
        _ = machine.terminateNow(reason: .explicit, generation: 0)
        #expect(machine.latestTermination == decided)
        #expect(machine.takePendingRelease() == decided)
        #expect(machine.latestTermination == decided, "kept for calls that join it until the next launch")
        _ = try machine.launch(options: LaunchOptions(), now: now)
        #expect(machine.latestTermination == nil)
        // One the lifecycle decides by itself (a process's exit) is made as it ends the app.
        _ = machine.endAtOnce(reason: .explicit)
        let ended = try #require(machine.latestTermination)
        #expect(ended != decided)
    }

    @Test func terminatingASuspendedAppEndsItAtOnce() throws {
        var machine = try suspendedMachine()
        let actions = try machine.terminate(reason: .explicit, from: [.inactive, .active, .background, .suspended])
        #expect(actions == moved(.suspended, .notRunning) + [
            .publishStates(PublishedStates.word(state: .notRunning, callbackState: nil)),
            .closeNotifications(dropping: []),
            .report(.terminated(app: app, reason: .explicit, state: .suspended)),
            .queueRelease,
            .run([], generation: 0),
        ])
        #expect(machine.state == .notRunning)
        #expect(machine.generation == 1)
        #expect(machine.terminationReason == .explicit)
        let termination = try #require(machine.latestTermination)

        // A relaunch asked for before the release was queued lets go of the last launch first.
        let relaunch = try machine.launch(options: LaunchOptions(), now: now)
        guard case .run(let steps, generation: 1) = relaunch.last else {
            Issue.record("no steps: \(relaunch)")
            return
        }
        #expect(steps.first == .releaseAfterTermination(termination))
        #expect(machine.launchOptions.previousTermination == .explicit)
        #expect(machine.terminationReason == nil)
        let releaseTaken = machine.takePendingRelease()
        #expect(releaseTaken == nil)
    }

    @Test func aTerminationReleasesItsObjectsOnceWhenNoRelaunchTookThem() throws {
        var machine = try suspendedMachine()
        _ = try machine.terminate(reason: .systemPressure, from: [.suspended])
        let releaseTaken = machine.takePendingRelease()
        #expect(releaseTaken != nil)
        #expect(releaseTaken == machine.latestTermination)
        let releaseTakenAgain = machine.takePendingRelease()
        #expect(releaseTakenAgain == nil)
        let relaunch = try machine.launch(options: LaunchOptions(), now: now)
        #expect(relaunch.last == .run(
            [.makeDelegate, .callback(.willFinishLaunching), .callback(.didFinishLaunching), .callback(.didBecomeActive)], generation: 1
        ))
    }

    @Test func aReturnFromSuspensionResumesTheQueuedNotificationsBetweenItsCallbacks() throws {
        var machine = try suspendedMachine()
        let notification = AppNotification(name: "n")
        let (hold, queue) = machine.holdSuspension(orQueue: notification)
        #expect(hold == nil)
        #expect(queue == [.queueNotification(notification)])
        let returned = try machine.enterForeground()
        #expect(returned == moved(.suspended, .inactive) + moved(.inactive, .active) + [
            .resumeNotifications(before: [.callback(.willEnterForeground)], after: [.callback(.didBecomeActive)], generation: 0)
        ])
    }

    @Test func theAppDoesNotSuspendWhileItsCodeRunsAndTheLastReleaseSuspendsIt() throws {
        var machine = makeMachine()
        _ = try machine.launch(options: LaunchOptions(), now: now)
        _ = try machine.enterBackground(now: now)
        let (held, none) = machine.holdSuspension(orQueue: nil)
        let hold = try #require(held)
        #expect(none.isEmpty)
        let entered = machine.finishEnteringBackground(generation: 0)
        #expect(entered.isEmpty)
        #expect(machine.state == .background)
        let released = machine.release(hold)
        #expect(released == moved(.background, .suspended) + [.suspendNotifications])
    }

    @Test func anAppThatKeepsRunningInTheBackgroundNeverSuspendsByItself() throws {
        var machine = makeMachine(keepsRunningInBackground: true)
        _ = try machine.launch(options: LaunchOptions(reason: .backgroundEvent("fetch")), now: now)
        let entered = machine.finishEnteringBackground(generation: 0)
        #expect(entered.isEmpty)
        #expect(machine.state == .background)
    }

    @Test func suspendingWithATaskOpenThrowsAndWhileEnteringWaitsForTheCallback() throws {
        var machine = makeMachine()
        _ = try machine.launch(options: LaunchOptions(), now: now)
        _ = try machine.enterBackground(now: now)
        let suspended = try machine.suspend()
        #expect(suspended == [.run([.suspendIfIdle], generation: 0)])
        let (task, _) = try machine.beginBackgroundTask(expirationHandler: 1)
        #expect(throws: MemoryPressureError.backgroundTasksOpen(app: app, count: 1)) { try machine.suspend() }
        #expect(throws: MemoryPressureError.unknownBackgroundTask(app: app, BackgroundTaskIdentifier(rawValue: task.rawValue, issuer: 8), ofAnotherApp: true)) {
            try machine.endBackgroundTask(BackgroundTaskIdentifier(rawValue: task.rawValue, issuer: 8))
        }
        #expect(machine.backgroundTasks.count == 1)
    }

    @Test func backgroundTimeRunsOutWithATaskOpenAfterTheHandlersHadTheirTurn() throws {
        var machine = makeMachine()
        _ = try machine.launch(options: LaunchOptions(), now: now)
        // A task opened in the foreground arms nothing: its time counts from the background.
        let (task, armed) = try machine.beginBackgroundTask(expirationHandler: 41)
        #expect(armed.isEmpty)
        let entered = try machine.enterBackground(now: now)
        let warn = Machine.BackgroundExpiryStep.warn(since: now, generation: 0)
        #expect(entered.contains(.armBackgroundExpiry(at: now + limit - .seconds(1), warn)))
        let finished = machine.finishEnteringBackground(generation: 0)
        #expect(finished.isEmpty)
        #expect(machine.state == .background)

        let end = Machine.BackgroundExpiryStep.end(since: now, generation: 0, extensionsLeft: 10)
        let warned = machine.backgroundExpiryDue(warn, now: now + .seconds(29), runLoopRunsATurn: false)
        #expect(warned == [
            .run([.runExpirationHandlers], generation: 0), .armBackgroundExpiry(at: now + limit, end),
        ])
        // The handlers have not had their turn and the run loop waits for a worker: another wait.
        let later = now + limit + .seconds(1)
        let extended = machine.backgroundExpiryDue(end, now: now + limit, runLoopRunsATurn: false)
        #expect(extended == [
            .armBackgroundExpiry(at: later, .end(since: now, generation: 0, extensionsLeft: 9))
        ])
        let handlers = machine.beginExpirationHandlers(generation: 0)
        #expect(handlers.map(\.0) == [task])
        #expect(handlers.map(\.1) == [41])
        #expect(machine.isExpirationHandlerDue(task, generation: 0))

        // The task is still open once they have had it: the app is terminated, its handler dropped.
        let expired = machine.backgroundExpiryDue(.end(since: now, generation: 0, extensionsLeft: 9), now: later, runLoopRunsATurn: false)
        #expect(expired == moved(.background, .notRunning) + [
            .cancelBackgroundExpiry,
            .publishStates(PublishedStates.word(state: .notRunning, callbackState: nil)),
            .closeNotifications(dropping: [41]),
            .report(.terminated(app: app, reason: .backgroundTaskExpired, state: .background)),
            .queueRelease,
        ])
        #expect(machine.backgroundTasks.isEmpty)
        #expect(!machine.isExpirationHandlerDue(task, generation: 0))
    }

    @Test func aTaskOpenedAfterTheStaysTimeRanOutGetsItsExpiryAtOnce() throws {
        // Runs in the background with no task: nothing suspends it, so it may open one late.
        var machine = makeMachine(keepsRunningInBackground: true)
        _ = try machine.launch(options: LaunchOptions(), now: now)
        let (first, _) = try machine.beginBackgroundTask(expirationHandler: 1)
        _ = try machine.enterBackground(now: now)
        _ = machine.finishEnteringBackground(generation: 0)
        let warn = Machine.BackgroundExpiryStep.warn(since: now, generation: 0)
        let end = Machine.BackgroundExpiryStep.end(since: now, generation: 0, extensionsLeft: 10)
        _ = machine.backgroundExpiryDue(warn, now: now + .seconds(29), runLoopRunsATurn: false)
        _ = try machine.endBackgroundTask(first)
        // Every task ended in time: the end passes, and the app runs on.
        #expect(machine.backgroundExpiryDue(end, now: now + limit, runLoopRunsATurn: false).isEmpty)
        #expect(machine.state == .background)
        #expect(machine.backgroundTimeRemaining(at: now + limit + .seconds(5)) == .zero)

        // A task opened once the time has run out was never armed, and kept the app running without
        // end: its warning is due at once, and its end a warning later.
        let (_, armed) = try machine.beginBackgroundTask(expirationHandler: 2)
        #expect(armed == [.armBackgroundExpiry(at: now + limit - .seconds(1), warn)])
        let late = now + limit + .seconds(5)
        let warned = machine.backgroundExpiryDue(warn, now: late, runLoopRunsATurn: false)
        #expect(warned == [
            .run([.runExpirationHandlers], generation: 0),
            .armBackgroundExpiry(at: late + .seconds(1), end),
        ])
        _ = machine.beginExpirationHandlers(generation: 0)
        let expired = machine.backgroundExpiryDue(end, now: late + .seconds(1), runLoopRunsATurn: false)
        #expect(expired.contains(.report(.terminated(app: app, reason: .backgroundTaskExpired, state: .background))))
        #expect(machine.state == .notRunning)
    }

    @Test func aReturnToTheForegroundDisarmsTheStaysExpiry() throws {
        var machine = makeMachine()
        _ = try machine.launch(options: LaunchOptions(), now: now)
        _ = try machine.beginBackgroundTask(expirationHandler: 1)
        _ = try machine.enterBackground(now: now)
        #expect(machine.isBackgroundExpiryArmed)
        let back = try machine.enterForeground()
        #expect(back.contains(.cancelBackgroundExpiry))
        #expect(machine.backgroundTimeRemaining(at: now) == nil)
        // A warning already on its way runs the handlers (they check for themselves), arms nothing.
        let warned = machine.backgroundExpiryDue(.warn(since: now, generation: 0), now: now, runLoopRunsATurn: false)
        #expect(warned == [
            .run([.runExpirationHandlers], generation: 0)
        ])
        let handlers = machine.beginExpirationHandlers(generation: 0)
        #expect(handlers.isEmpty)
    }

    @Test func workOfAnEarlierLaunchIsIgnored() throws {
        var machine = makeMachine()
        _ = try machine.launch(options: LaunchOptions(reason: .backgroundEvent("fetch")), now: now)
        _ = try machine.beginBackgroundTask(expirationHandler: 1)
        _ = machine.endAtOnce(reason: .processExited)
        _ = try machine.launch(options: LaunchOptions(reason: .backgroundEvent("fetch")), now: now + .seconds(5))
        #expect(machine.generation == 1)
        let before = machine.publishedStates
        let entered = machine.finishEnteringBackground(generation: 0)
        #expect(entered.isEmpty)
        let suspended = machine.suspendIfIdle(generation: 0)
        #expect(suspended.isEmpty)
        let reading = machine.beginCallback(.didEnterBackground, generation: 0)
        #expect(reading.isEmpty)
        let returned = machine.endCallback(generation: 0, now: now + .seconds(60))
        #expect(returned.isEmpty)
        let overran = machine.callbackDeadlinePassed(generation: 0)
        #expect(overran.isEmpty)
        let terminated = machine.terminateNow(reason: .deadline, generation: 0)
        #expect(terminated.isEmpty)
        let released = machine.release(SuspensionHold(generation: 0))
        #expect(released.isEmpty)
        let ended = machine.backgroundExpiryDue(.end(since: now, generation: 0, extensionsLeft: 0), now: now, runLoopRunsATurn: false)
        #expect(ended.isEmpty)
        let handlers = machine.beginExpirationHandlers(generation: 0)
        #expect(handlers.isEmpty)
        #expect(machine.state == .background)
        #expect(machine.backgroundEntriesUnderWay == 1)
        #expect(machine.publishedStates == before)
    }
}
