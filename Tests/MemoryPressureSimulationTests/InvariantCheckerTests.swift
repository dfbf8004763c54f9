import MemoryPressure
@testable import MemoryPressureSimulation
import MemoryPressureTestKit
import Testing

/// The checks fed made-up events: each kind of broken promise is caught, and a kept one is not.
struct InvariantCheckerTests {
    let journal = AppJournal()
    let start = ContinuousClock.now
    let footprints = SharedBox<[AppIdentifier: Int]>([:])
    let checker: InvariantChecker

    init() {
        let footprints = footprints
        checker = InvariantChecker(journal: journal, start: start) { footprints.value[$0] ?? 0 }
    }

    func time(_ milliseconds: Int) -> ContinuousClock.Instant {
        start + .milliseconds(milliseconds)
    }

    func feed(_ events: [LifecycleEvent], at milliseconds: Int) {
        for event in events { checker.observe(event, at: time(milliseconds)) }
    }

    /// Launches `name` into the foreground and sends it to the background until it suspends.
    func launchAndSuspend(_ name: String, at milliseconds: Int) {
        let app = AppIdentifier.test(name)
        feed([
            .stateChanged(app: app, from: .notRunning, to: .inactive), .callback(app: app, .willFinishLaunching),
            .callback(app: app, .didFinishLaunching), .stateChanged(app: app, from: .inactive, to: .active),
            .callback(app: app, .didBecomeActive), .stateChanged(app: app, from: .active, to: .inactive),
            .callback(app: app, .willResignActive), .stateChanged(app: app, from: .inactive, to: .background),
            .callback(app: app, .didEnterBackground), .stateChanged(app: app, from: .background, to: .suspended),
        ], at: milliseconds)
    }

    func terminateForPressure(_ name: String, from state: AppState, at milliseconds: Int) {
        let app = AppIdentifier.test(name)
        feed([.stateChanged(app: app, from: state, to: .notRunning), .terminated(app: app, reason: .systemPressure, state: state)], at: milliseconds)
    }

    @Test func aValidLifeBreaksNoPromise() {
        launchAndSuspend("maps", at: 0)
        let maps = AppIdentifier.test("maps")
        feed([
            .stateChanged(app: maps, from: .suspended, to: .inactive), .stateChanged(app: maps, from: .inactive, to: .active),
            .callback(app: maps, .willEnterForeground), .callback(app: maps, .didBecomeActive),
            .callback(app: maps, .didReceiveMemoryWarning), .stateChanged(app: maps, from: .active, to: .inactive),
            .callback(app: maps, .willResignActive), .stateChanged(app: maps, from: .inactive, to: .active),
            .callback(app: maps, .didBecomeActive), .stateChanged(app: maps, from: .active, to: .inactive),
            .callback(app: maps, .willResignActive), .stateChanged(app: maps, from: .inactive, to: .background),
            .callback(app: maps, .didEnterBackground), .callback(app: maps, .willTerminate),
            .stateChanged(app: maps, from: .background, to: .notRunning), .terminated(app: maps, reason: .explicit, state: .background),
            .released(app: maps), .stateChanged(app: maps, from: .notRunning, to: .inactive), .callback(app: maps, .willFinishLaunching),
            .callback(app: maps, .didFinishLaunching), .callback(app: maps, .didEnterBackground),
        ], at: 100)
        #expect(checker.violations.isEmpty)
    }

    @Test(arguments: [
        ([LifecycleCallback.willFinishLaunching, .didBecomeActive], "maps: didBecomeActive came after willFinishLaunching while launching"),
        ([.didFinishLaunching], "maps: didFinishLaunching came first while not launched"),
        ([.willFinishLaunching, .didFinishLaunching, .didBecomeActive, .didEnterBackground], "maps: didEnterBackground came after didBecomeActive while active"),
        ([.willFinishLaunching, .didFinishLaunching, .willTerminate, .didReceiveMemoryWarning], "maps: didReceiveMemoryWarning came after willTerminate while terminating"),
        ([.willFinishLaunching, .didFinishLaunching, .didBecomeActive, .willEnterForeground], "maps: willEnterForeground came after didBecomeActive while active"),
    ])
    func callbacksOutOfOrderAreCaught(_ callbacks: [LifecycleCallback], _ expected: String) {
        feed(callbacks.map { .callback(app: .test("maps"), $0) }, at: 10)
        #expect(checker.violations == ["at 0.01s: \(expected)"])
    }

    @Test func anActiveAppTerminatedForPressureIsCaught() {
        let notes = AppIdentifier.test("notes")
        feed([.stateChanged(app: notes, from: .notRunning, to: .inactive), .stateChanged(app: notes, from: .inactive, to: .active)], at: 0)
        terminateForPressure("notes", from: .active, at: 250)
        #expect(checker.violations == ["at 0.25s: notes was terminated for system pressure while active"])
    }

    @Test(arguments: [AppState.active, .inactive])
    func aPressureTerminationOfAnAppNeitherSuspendedNorInTheBackgroundIsCaught(_ seen: AppState) {
        let notes = AppIdentifier.test("notes")
        feed([.stateChanged(app: notes, from: .notRunning, to: .inactive), .stateChanged(app: notes, from: .inactive, to: .active)], at: 0)
        if seen == .inactive { feed([.stateChanged(app: notes, from: .active, to: .inactive)], at: 10) }
        // The termination says the app was in the background: the checker goes by what it saw.
        feed([.stateChanged(app: notes, from: seen, to: .notRunning), .terminated(app: notes, reason: .systemPressure, state: .background)], at: 250)
        #expect(checker.violations == ["at 0.25s: notes was terminated for system pressure while \(seen)"])
    }

    @Test func willTerminateAfterTheAppWasSuspendedIsCaught() {
        launchAndSuspend("maps", at: 0)
        let maps = AppIdentifier.test("maps")
        feed([.callback(app: maps, .willTerminate)], at: 300)
        terminateForPressure("maps", from: .suspended, at: 310)
        #expect(checker.violations == ["at 0.30s: maps: willTerminate came after it was suspended"])
    }

    @Test func observersRunningWhileTheAppIsSuspendedAreCaught() {
        launchAndSuspend("mail", at: 0)
        let mail = AppIdentifier.test("mail")
        feed([.delivered(app: mail, "unread")], at: 100)
        feed([.callback(app: mail, .didReceiveMemoryWarning), .delivered(app: mail, .didReceiveMemoryWarning)], at: 200)
        // Back in the foreground, its observers hear what was queued: that breaks no promise.
        feed([
            .stateChanged(app: mail, from: .suspended, to: .inactive), .stateChanged(app: mail, from: .inactive, to: .active),
            .callback(app: mail, .willEnterForeground), .delivered(app: mail, "unread"), .callback(app: mail, .didBecomeActive),
        ], at: 300)
        #expect(checker.violations == [
            "at 0.10s: mail: its observers heard unread while it was suspended",
            "at 0.20s: mail: a memory warning reached it while it was suspended",
            "at 0.20s: mail: its observers heard didReceiveMemoryWarning while it was suspended",
        ])
    }

    @Test func terminatingASmallerSuspendedAppWhileALargerOneWasSuspendedIsCaught() {
        launchAndSuspend("small", at: 0)
        launchAndSuspend("large", at: 10)
        footprints.update { $0[.test("small")] = 10 * mebibyte }
        footprints.update { $0[.test("large")] = 90 * mebibyte }
        terminateForPressure("small", from: .suspended, at: 500)
        checker.checkLadderRun(startedAt: time(400), victims: [.test("small")])
        #expect(checker.violations == ["at 0.50s: small (10 MiB) was terminated for system pressure while the larger large (90 MiB) was suspended"])
    }

    @Test func theLargestSuspendedAppFirstKeepsThePromise() {
        launchAndSuspend("small", at: 0)
        launchAndSuspend("large", at: 10)
        footprints.update { $0[.test("small")] = 10 * mebibyte }
        footprints.update { $0[.test("large")] = 90 * mebibyte }
        terminateForPressure("large", from: .suspended, at: 500)
        terminateForPressure("small", from: .suspended, at: 510)
        checker.checkLadderRun(startedAt: time(400), victims: [.test("large"), .test("small")])
        #expect(checker.violations.isEmpty)
    }

    @Test func anAppSuspendedOnlyAfterTheLadderChoseIsNoCompetitor() {
        launchAndSuspend("small", at: 0)
        footprints.update { $0[.test("small")] = 10 * mebibyte }
        footprints.update { $0[.test("late")] = 90 * mebibyte }
        launchAndSuspend("late", at: 450)
        terminateForPressure("small", from: .suspended, at: 500)
        checker.checkLadderRun(startedAt: time(400), victims: [.test("small")])
        #expect(checker.violations.isEmpty)
    }

    @Test func aBackgroundAppTerminatedWhileOneWasSuspendedIsCaught() {
        launchAndSuspend("idle", at: 0)
        let music = AppIdentifier.test("music")
        feed([
            .stateChanged(app: music, from: .notRunning, to: .inactive), .callback(app: music, .willFinishLaunching),
            .callback(app: music, .didFinishLaunching), .stateChanged(app: music, from: .inactive, to: .background),
            .callback(app: music, .didEnterBackground),
        ], at: 20)
        feed([.callback(app: music, .willTerminate)], at: 500)
        terminateForPressure("music", from: .background, at: 520)
        checker.checkLadderRun(startedAt: time(400), victims: [music])
        #expect(checker.violations == ["at 0.52s: music was terminated for system pressure in the background while idle was suspended"])
    }

    @Test func aWarningThatReachedEveryPartOnceKeepsThePromise() {
        let photos = AppIdentifier.test("photos")
        feed([.stateChanged(app: photos, from: .notRunning, to: .inactive), .stateChanged(app: photos, from: .inactive, to: .active)], at: 0)
        let warning = time(100)
        journal.recordDelegateWarning(warning, app: photos, controllers: 2, observers: 1)
        journal.recordControllerWarning(warning, app: photos, controller: 0)
        journal.recordControllerWarning(warning, app: photos, controller: 1)
        journal.recordObserverWarning(warning, app: photos, observer: 1)
        checker.checkWarning(raisedAt: warning, duration: .milliseconds(5), reached: (1, 2, 1))
        #expect(checker.violations.isEmpty)
    }

    @Test func aWarningThatMissedARunningAppOrReachedAPartTwiceIsCaught() {
        for name in ["photos", "maps"] {
            let app = AppIdentifier.test(name)
            feed([.stateChanged(app: app, from: .notRunning, to: .inactive), .stateChanged(app: app, from: .inactive, to: .background)], at: 0)
        }
        let photos = AppIdentifier.test("photos")
        let warning = time(100)
        journal.recordDelegateWarning(warning, app: photos, controllers: 1, observers: 2)
        journal.recordControllerWarning(warning, app: photos, controller: 0)
        journal.recordObserverWarning(warning, app: photos, observer: 1)
        journal.recordObserverWarning(warning, app: photos, observer: 1)
        checker.checkWarning(raisedAt: warning, duration: .milliseconds(5), reached: (1, 1, 2))
        #expect(checker.violations == [
            "at 0.10s: memory warning reached 1 of photos's 2 observers, 1 of them not exactly once",
            "at 0.10s: memory warning was counted by the system as reaching 1 delegates, 1 controllers and 2 observers, by the apps as 1, 1 and 1",
            "at 0.10s: memory warning did not reach maps, running throughout",
        ])
    }

    /// An app whose run loop is still busy when the warning's timeout passes (a launch whose
    /// allocation waits for room, say) hears it later, uncounted by the system: not a broken promise,
    /// whether it has heard it by the time of the check or not.
    @Test func aWarningIsNotJudgedForTheAppsThatTimedOut() {
        for name in ["photos", "maps", "music"] {
            let app = AppIdentifier.test(name)
            feed([.stateChanged(app: app, from: .notRunning, to: .inactive), .stateChanged(app: app, from: .inactive, to: .background)], at: 0)
        }
        let (photos, maps) = (AppIdentifier.test("photos"), AppIdentifier.test("maps"))
        let warning = time(100)
        journal.recordDelegateWarning(warning, app: photos, controllers: 1, observers: 1)
        journal.recordControllerWarning(warning, app: photos, controller: 0)
        journal.recordObserverWarning(warning, app: photos, observer: 1)
        // Maps finished its part after the timeout, before the check; music has not yet.
        journal.recordDelegateWarning(warning, app: maps, controllers: 1, observers: 1)
        checker.checkWarning(raisedAt: warning, duration: .seconds(2), reached: (1, 1, 1), timedOut: [maps, .test("music")])
        #expect(checker.violations.isEmpty)
    }

    @Test func aRelaunchThatDoesNotFindTheSavedStateIsCaught() {
        let photos = AppIdentifier.test("photos")
        let saved = SavedState(app: "photos", launch: 1, activity: 12, screen: 2, cacheEntries: 40)
        #expect(journal.recordLaunch(of: photos, restored: nil, failure: nil) == 1)
        journal.recordSave(of: photos, saved)
        feed([.stateChanged(app: photos, from: .suspended, to: .notRunning), .terminated(app: photos, reason: .systemPressure, state: .suspended)], at: 0)
        #expect(journal.recordLaunch(of: photos, restored: saved, failure: nil) == 2)
        journal.recordSave(of: photos, SavedState(app: "photos", launch: 2, activity: 20, screen: 0, cacheEntries: 50))
        feed([.stateChanged(app: photos, from: .suspended, to: .notRunning), .terminated(app: photos, reason: .systemPressure, state: .suspended)], at: 10)
        _ = journal.recordLaunch(of: photos, restored: saved, failure: nil)
        #expect(journal.restorations == .init(relaunches: 2, restored: 1, lost: 1))
        #expect(checker.violations == ["photos relaunched with launch 1's state, not the state launch 2 saved"])
    }
}
