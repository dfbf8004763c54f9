import Dispatch
import Jemalloc
@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import Testing

/// Issue 16, "The lifecycle contract, exact and race-free": one test for each of its eleven items,
/// against real apps hosted by a real `MemorySystem` (and its ladder, under real pressure, where an
/// item is about reclamation). The waits are bounded only so that a broken test cannot hang; no
/// test asserts how long anything took.
@Suite(.serialized, .exclusiveMemoryUse, .timeLimit(.minutes(3)))
struct LifecycleContractTests {
    /// A system that is never under pressure: its target is 1 GiB above the process's footprint.
    static func quietSystem() throws -> MemorySystem {
        try MemorySystem(configuration: .test(targetBytes: settledResidentBytes() + 1024 * mebibyte, logger: silentLogger))
    }

    // MARK: 1. State inside each callback

    @Test func stateReadsAsUIKitsApplicationStateInsideEachCallback() async throws {
        let system = try Self.quietSystem()
        let log = SharedLog<String>()
        let systemLog = SharedLog<String>()
        let app = try system.register(.test("reader"), configuration: .patient()) {
            StateReadingDelegate(log: log, systemLog: systemLog)
        }
        var between: [AppState] = []
        try await app.launch()
        between.append(app.state)
        try await app.deactivate()
        between.append(app.state)
        try await app.activate()
        between.append(app.state)
        try await app.enterBackground()
        between.append(app.state)
        try await app.enterForeground()
        between.append(app.state)
        try await app.terminate(reason: .explicit)
        between.append(app.state)
        try await app.launch(options: LaunchOptions(reason: .backgroundEvent("fetch")))
        between.append(app.state)

        // What UIKit's applicationState reads inside each callback.
        #expect(log.all == [
            "willFinishLaunching inactive", "didFinishLaunching inactive", "didBecomeActive active",
            "willResignActive active", "didBecomeActive active",
            "willResignActive active", "didEnterBackground background",
            "willEnterForeground background", "didBecomeActive active",
            "willTerminate active",
            "willFinishLaunching background", "didFinishLaunching background", "didEnterBackground background",
        ])
        // What the system decides by meanwhile: where each transition is taking the app.
        #expect(systemLog.all == [
            "willFinishLaunching active", "didFinishLaunching active", "didBecomeActive active",
            "willResignActive inactive", "didBecomeActive active",
            "willResignActive background", "didEnterBackground background",
            "willEnterForeground active", "didBecomeActive active",
            "willTerminate active",
            "willFinishLaunching background", "didFinishLaunching background", "didEnterBackground background",
        ])
        // Between callbacks, both read the state the app was moved to.
        #expect(between == [.active, .inactive, .active, .suspended, .active, .notRunning, .suspended])
    }

    // MARK: 2. One background budget

    @Test func backgroundTimeIsOneBudgetPerStayCountedFromEnteringTheBackground() async throws {
        let system = try Self.quietSystem()
        let limit = Duration.milliseconds(300)
        let configuration = AppConfiguration.patient(backgroundTime: limit)
        let expirations = SharedLog<String>()

        // A task opened in the foreground costs nothing there: it expires only once the app has
        // spent its background time. On a system of its own whose clock the test steps.
        let clock = ManualClock()
        var steppedConfiguration = try MemorySystem.Configuration.test(targetBytes: settledResidentBytes() + 1024 * mebibyte, logger: silentLogger)
        steppedConfiguration.clock = clock
        let stepped = try MemorySystem(configuration: steppedConfiguration)
        let foreground = try stepped.register(.test("foreground-task"), configuration: configuration) { StateReadingDelegate() }
        try await foreground.launch()
        _ = try foreground.beginBackgroundTask { _ in expirations.append("foreground-task") }
        #expect(foreground.backgroundTimeRemaining == nil)
        // Three times the background time in the foreground: at that instant, nothing has expired.
        clock.step(by: limit * 3)
        #expect(await stepped.threads.timers.haveLookedAtTheTimeNow())
        #expect(foreground.state == .active)
        #expect(foreground.openBackgroundTaskCount == 1)
        #expect(expirations.all.isEmpty)
        #expect(try await foreground.enterBackground() == .background)
        #expect(try #require(foreground.backgroundTimeRemaining) <= limit)
        // The handlers' turn, a quarter of the time before its end; then the end.
        clock.step(by: limit - limit / 4)
        #expect(await eventually { !expirations.all.isEmpty })
        clock.step(by: limit / 4)
        #expect(await eventually { foreground.state == .notRunning })
        #expect(foreground.terminationReason == .backgroundTaskExpired)
        #expect(expirations.take() == ["foreground-task"])
        #expect(foreground.backgroundTimeRemaining == nil)

        // Opening a new task does not buy time: an app that swaps its task for a fresh one in each
        // expiration handler still ends when its one budget runs out.
        let remaining = SharedLog<String>()
        let renewing = try system.register(.test("renewing"), configuration: configuration) {
            let delegate = StateReadingDelegate()
            delegate.hooks[.didEnterBackground] = { app in
                Self.openRenewingTask(in: app, expirations: expirations, remaining: remaining)
            }
            return delegate
        }
        try await renewing.launch()
        #expect(try await renewing.enterBackground() == .background)
        #expect(await eventually { renewing.state == .notRunning })
        #expect(renewing.terminationReason == .backgroundTaskExpired)
        #expect(!expirations.all.isEmpty)
        #expect(expirations.all.allSatisfy { $0 == "renewing" })
        #expect(remaining.all.allSatisfy { $0 == "not extended" })

        // The end is enforced from outside the run loop: an expiration handler that blocks it does
        // not keep the app alive.
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        let blocked = try system.register(.test("blocked-handler"), configuration: configuration) {
            let delegate = StateReadingDelegate()
            delegate.hooks[.didEnterBackground] = { app in
                _ = try? app.beginBackgroundTask { _ in _ = gate.wait(timeout: .now() + 60) }
            }
            return delegate
        }
        try await blocked.launch()
        #expect(try await blocked.enterBackground() == .background)
        #expect(await eventually { blocked.state == .notRunning })
        #expect(blocked.terminationReason == .backgroundTaskExpired)
    }

    /// Opens a background task whose expiration handler opens another (whose handler does the same)
    /// and ends its own, noting whether the new task changed the time remaining.
    static func openRenewingTask(in app: isolated App, expirations: SharedLog<String>, remaining: SharedLog<String>) {
        let task = SharedBox<BackgroundTaskIdentifier?>(nil)
        task.value = try? app.beginBackgroundTask { app in
            expirations.append("renewing")
            let before = app.backgroundTimeRemaining ?? .zero
            Self.openRenewingTask(in: app, expirations: expirations, remaining: remaining)
            let after = app.backgroundTimeRemaining ?? .zero
            remaining.append(after <= before ? "not extended" : "extended from \(before) to \(after)")
            if let open = task.value { try? app.endBackgroundTask(open) }
        }
    }

    // MARK: 3. Nothing after willTerminate

    @Test func nothingMovesAnAppOutOfItsTermination() async throws {
        let system = try Self.quietSystem()
        let lifecycle = system.lifecycleEvents.stream()
        let configuration = AppConfiguration.patient()

        // willTerminate may not ask for time, and ending its last task there does not suspend it;
        // what it posts to itself is never delivered.
        let log = SharedLog<String>()
        let task = SharedBox<BackgroundTaskIdentifier?>(nil)
        let closing = try system.register(.test("closing"), configuration: configuration) {
            let delegate = StateReadingDelegate(log: log)
            delegate.hooks[.didFinishLaunching] = { app in
                app.notificationCenter.addObserver(forName: nil) { _, notification in log.append("observer \(notification.name)") }
            }
            delegate.hooks[.didEnterBackground] = { app in task.value = try? app.beginBackgroundTask { _ in } }
            delegate.hooks[.willTerminate] = { app in
                do {
                    _ = try app.beginBackgroundTask { _ in }
                    log.append("began a task")
                } catch {
                    log.append("refused: \(error)")
                }
                app.notificationCenter.post(name: "late")
                if let open = task.value { try? app.endBackgroundTask(open) }
                log.append("after ending the last task: \(app.systemState)")
            }
            return delegate
        }
        try await closing.launch()
        #expect(try await closing.enterBackground() == .background)
        _ = log.take()
        #expect(try await closing.terminate(reason: .explicit) == .notRunning)
        #expect(log.all == [
            "willTerminate background",
            "refused: app closing cannot beginBackgroundTask while it is terminating",
            "after ending the last task: background",
        ])
        let closingRecord = await system.terminationRecord(of: closing.identifier)
        #expect(closingRecord?.state == .background)
        #expect(closingRecord?.reason == .explicit)

        // A termination asked for while didEnterBackground runs (as the ladder's, of a background
        // app) is not undone by the suspension that would have followed: willTerminate runs in the
        // background, and the app is terminated from there.
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let interruptedLog = SharedLog<String>()
        let interrupted = try system.register(.test("interrupted"), configuration: configuration) {
            let delegate = StateReadingDelegate(log: interruptedLog)
            delegate.hooks[.didEnterBackground] = { _ in
                entered.signal()
                _ = gate.wait(timeout: .now() + 60)
            }
            return delegate
        }
        try await interrupted.launch()
        async let entering = interrupted.enterBackground()
        #expect(await Self.wait(for: entered))
        let terminator = system.terminator
        async let termination = terminator.terminate(
            interrupted, reason: .systemPressure, step: .terminateBackground, from: [.background]
        )
        #expect(await eventually { interrupted.record.withLock { $0.machine.isTerminating } })
        gate.signal()
        _ = try? await entering
        let record = await termination
        #expect(interrupted.state == .notRunning)
        #expect(interruptedLog.all.suffix(2) == ["didEnterBackground background", "willTerminate background"])
        #expect(record?.state == .background)
        #expect(record?.reason == .systemPressure)

        var suspensions: [AppIdentifier] = []
        for await event in lifecycle {
            if case .stateChanged(let app, _, .suspended) = event { suspensions.append(app) }
            if case .released(let app) = event, app == interrupted.identifier { break }
        }
        #expect(suspensions.isEmpty)

        try await Self.aWarningPostedDuringWillTerminateIsNotDeliveredAfterIt(in: system)
    }

    /// A memory warning posted to an app while its willTerminate runs reaches neither that launch,
    /// after willTerminate, nor the next one, however soon the app is launched again.
    static func aWarningPostedDuringWillTerminateIsNotDeliveredAfterIt(in system: MemorySystem) async throws {
        let log = SharedLog<String>()
        let entered = DispatchSemaphore(value: 0)
        let leave = DispatchSemaphore(value: 0)
        let busy = DispatchSemaphore(value: 0)
        defer {
            leave.signal()
            busy.signal()
        }
        let holding = SharedBox(true)
        let phoenix = try system.register(.test("phoenix"), configuration: .patient()) {
            let delegate = StateReadingDelegate(log: log)
            delegate.hooks[.willTerminate] = { app in
                guard holding.value else { return }
                // Work of the run loop after willTerminate, ahead of the warning posted below.
                app.enqueue { _ in _ = busy.wait(timeout: .now() + 60) }
                entered.signal()
                _ = leave.wait(timeout: .now() + 60)
            }
            return delegate
        }
        try await phoenix.launch()
        _ = log.take()
        async let termination = phoenix.terminate(reason: .explicit)
        #expect(await wait(for: entered))
        _ = MemoryWarning(level: .warning).post(to: [phoenix]) { _ in 0 }
        leave.signal()
        #expect(await eventually { phoenix.systemState == .notRunning })
        async let relaunch = phoenix.launch()
        #expect(await eventually { phoenix.systemState == .active })
        busy.signal()
        #expect(try await termination == .notRunning)
        #expect(try await relaunch == .active)
        #expect(log.all == ["willTerminate active", "willFinishLaunching inactive", "didFinishLaunching inactive", "didBecomeActive active"])

        // Nor does a warning that finds the app terminated (it stopped after it was chosen) go to
        // the launch that follows, ahead of its callbacks.
        holding.value = false
        try await phoenix.terminate(reason: .explicit)
        _ = log.take()
        let held = DispatchSemaphore(value: 0)
        defer { held.signal() }
        phoenix.enqueue { _ in _ = held.wait(timeout: .now() + 60) }
        let receipt = phoenix.receiveMemoryWarning(MemoryWarning(level: .warning))
        async let launched = phoenix.launch()
        #expect(await eventually { phoenix.systemState == .active })
        held.signal()
        #expect(try await launched == .active)
        #expect(await receipt.value.delegates == 0)
        #expect(log.all == ["willFinishLaunching inactive", "didFinishLaunching inactive", "didBecomeActive active"])
    }

    // MARK: 4. No app code while suspended

    @Test func noAppCodeRunsWhileItsAppIsSuspended() async throws {
        let system = try Self.quietSystem()
        let configuration = AppConfiguration.patient()

        // Posted during didEnterBackground, behind other work of the run loop: not yet run when the
        // app suspends, nor when it is brought back, it is queued, coalesced and delivered on the
        // app's return, after willEnterForeground.
        let mailLog = SharedLog<String>()
        let busy = DispatchSemaphore(value: 0)
        defer { busy.signal() }
        let mail = try system.register(.test("mail"), configuration: configuration) {
            let delegate = StateReadingDelegate(log: mailLog)
            delegate.hooks[.didFinishLaunching] = { app in
                app.notificationCenter.addObserver(forName: nil) { app, notification in
                    mailLog.append("observer \(notification.name) \(notification.payload) x\(notification.postCount) in \(app.systemState)")
                }
            }
            delegate.hooks[.didEnterBackground] = { app in
                app.enqueue { _ in _ = busy.wait(timeout: .now() + 60) }
                app.notificationCenter.post(name: "unread", payload: .delta(1))
                app.notificationCenter.post(name: "unread", payload: .delta(2))
            }
            return delegate
        }
        try await mail.launch()
        #expect(try await mail.enterBackground() == .suspended)
        async let returned = mail.enterForeground()
        #expect(await eventually { mail.systemState == .active })
        busy.signal()
        #expect(try await returned == .active)
        #expect(mailLog.all.suffix(5) == [
            "willResignActive active", "didEnterBackground background",
            "willEnterForeground background", "observer unread delta(3) x2 in active", "didBecomeActive active",
        ])

        // An observer that ends the last background task finishes before the app suspends; what it
        // posted just before is queued for the app's return.
        let syncLog = SharedLog<String>()
        let task = SharedBox<BackgroundTaskIdentifier?>(nil)
        let sync = try system.register(.test("sync"), configuration: configuration) {
            let delegate = StateReadingDelegate(log: syncLog)
            delegate.hooks[.didFinishLaunching] = { app in
                app.notificationCenter.addObserver(forName: nil) { app, notification in
                    syncLog.append("observer \(notification.name) in \(app.systemState)")
                    guard notification.name == "finished" else { return }
                    app.notificationCenter.post(name: "progress")
                    if let open = task.value { try? app.endBackgroundTask(open) }
                    syncLog.append("observer ended the last task, in \(app.systemState)")
                }
            }
            delegate.hooks[.didEnterBackground] = { app in task.value = try? app.beginBackgroundTask { _ in } }
            return delegate
        }
        try await sync.launch()
        #expect(try await sync.enterBackground() == .background)
        _ = syncLog.take()
        sync.notificationCenter.post(name: "finished")
        #expect(await eventually { sync.state == .suspended })
        #expect(try await sync.enterForeground() == .active)
        #expect(syncLog.all == [
            "observer finished in background", "observer ended the last task, in background",
            "willEnterForeground background", "observer progress in active", "didBecomeActive active",
        ])

        // Home, back and Home again before the run loop has run the first didEnterBackground: the
        // app suspends once the last has returned, and none of the callbacks runs in a suspended app.
        let hopLog = SharedLog<String>()
        let hopSystemLog = SharedLog<String>()
        let hopper = try system.register(.test("hopper"), configuration: configuration) {
            StateReadingDelegate(log: hopLog, systemLog: hopSystemLog)
        }
        try await hopper.launch()
        _ = (hopLog.take(), hopSystemLog.take())
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        hopper.enqueue { _ in _ = gate.wait(timeout: .now() + 60) }
        async let home = hopper.enterBackground()
        #expect(await eventually { hopper.systemState == .background })
        async let back = hopper.enterForeground()
        #expect(await eventually { hopper.systemState == .active })
        async let homeAgain = hopper.enterBackground()
        #expect(await eventually { hopper.systemState == .background })
        gate.signal()
        _ = try await (home, back, homeAgain)
        #expect(await eventually { hopper.state == .suspended })
        #expect(hopLog.all == [
            "willResignActive active", "didEnterBackground background", "willEnterForeground background",
            "didBecomeActive active", "willResignActive active", "didEnterBackground background",
        ])
        // Where the system had the app meanwhile: in the background, where the last transition took it.
        #expect(hopSystemLog.all == [
            "willResignActive background", "didEnterBackground background", "willEnterForeground background",
            "didBecomeActive background", "willResignActive background", "didEnterBackground background",
        ])

        try await Self.evictionHandlersOfASuspendedAppAreNotCalled(in: system)
    }

    /// The purge of an app entering the background runs on its run loop once `didEnterBackground`
    /// has returned and before it suspends: its eviction handlers run in the background, every
    /// time, an app's purge never waits behind another's, and the entry holds the suspension off
    /// until the handlers return. A suspended app's caches are purged without calling into it.
    static func evictionHandlersOfASuspendedAppAreNotCalled(in system: MemorySystem) async throws {
        let configuration = AppConfiguration.patient()
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        let evictions = SharedLog<String>()
        let caches = SharedBox<[String: PurgeableCache<Int, any Sendable>]>([:])
        let task = SharedBox<BackgroundTaskIdentifier?>(nil)

        let makeCache: @Sendable (isolated App, Bool) -> Void = { app, blocking in
            let name = app.identifier.rawValue
            let cache = try? PurgeableCache<Int, any Sendable>(name: name, owner: app.identifier, category: .images) { [app] key, _ in
                evictions.append("\(name) \(key) began in \(app.systemState)")
                if blocking, key == 1 {
                    entered.signal()
                    _ = gate.wait(timeout: .now() + 60)
                }
                evictions.append("\(name) \(key) ended in \(app.systemState)")
            }
            guard let cache else { return }
            try? cache.setValue(1, forKey: 1, cost: 10)
            try? cache.setValue(TestContent(id: 2), forKey: 2, cost: 10)
            system.register(cache)
            caches.update { $0[name] = cache }
        }
        // The gallery's purge on entering the background blocks in its first eviction handler; the
        // gallery ends its last task meanwhile.
        let gallery = try system.register(.test("gallery"), configuration: configuration) {
            let delegate = StateReadingDelegate()
            delegate.hooks[.didFinishLaunching] = { app in makeCache(app, true) }
            delegate.hooks[.didEnterBackground] = { app in task.value = try? app.beginBackgroundTask { _ in } }
            return delegate
        }
        // The archive enters the background while the gallery's purge blocks.
        let archive = try system.register(.test("archive"), configuration: configuration) {
            let delegate = StateReadingDelegate()
            delegate.hooks[.didFinishLaunching] = { app in makeCache(app, false) }
            return delegate
        }
        try await system.running {
            try await gallery.launch()
            try await archive.launch()
            async let galleryEntry = gallery.enterBackground()
            #expect(await wait(for: entered))
            try gallery.endBackgroundTask(try #require(task.value))
            #expect(gallery.state == .background)
            // Its purge does not wait behind the gallery's, and is done before it suspends.
            #expect(try await archive.enterBackground() == .suspended)
            #expect(evictions.all.filter { $0.hasPrefix("archive") } == [
                "archive 1 began in background", "archive 1 ended in background",
                "archive 2 began in background", "archive 2 ended in background",
            ])
            #expect(gallery.state == .background)
            gate.signal()
            #expect(try await galleryEntry == .suspended)
        }
        // The gallery's handlers ran while it was in the background, all of them.
        #expect(evictions.all.filter { $0.hasPrefix("gallery") } == [
            "gallery 1 began in background", "gallery 1 ended in background",
            "gallery 2 began in background", "gallery 2 ended in background",
        ])
        let archiveCache = try #require(caches.value["archive"])
        #expect(archiveCache.keysInEvictionOrder == [])

        // The ladder purges a suspended app's caches as the registry's quiet purge does: what may
        // go without asking goes, discardable content stays, and no handler is called.
        let evictionsBefore = evictions.all.count
        try archiveCache.setValue(1, forKey: 1, cost: 10)
        try archiveCache.setValue(TestContent(id: 2), forKey: 2, cost: 10)
        #expect(archive.holdSuspension() == nil, "a suspended app runs no code")
        _ = system.registry.purge(.warning, apps: [archive.identifier], quietlyFor: [archive.identifier])
        #expect(evictions.all.count == evictionsBefore)
        #expect(archiveCache.keysInEvictionOrder == [2])
        #expect((archiveCache.value(forKey: 2) as? TestContent)?.isContentDiscarded == false)
    }

    // MARK: 5. Coalescing

    @Test func coalescingKeepsTheNetChangeOfEveryMixOfPayloads() async throws {
        let system = try Self.quietSystem()
        let received = SharedLog<String>()
        let app = try system.register(.test("counter"), configuration: .patient()) {
            let delegate = StateReadingDelegate(log: received)
            delegate.hooks[.didFinishLaunching] = { app in
                app.notificationCenter.addObserver(forName: nil) { _, notification in
                    received.append("\(notification.name) \(notification.payload) x\(notification.postCount)")
                }
            }
            return delegate
        }
        try await app.launch()
        #expect(try await app.enterBackground() == .suspended)
        let posts: [(AppNotification.Name, [NotificationPayload])] = [
            ("then-empty", [.delta(5), .empty]),
            ("empty-first", [.empty, .delta(3)]),
            ("negative", [.delta(-5), .empty, .delta(-7)]),
            ("past-max-and-back", [.delta(.max), .delta(.max), .delta(.min), .delta(.min)]),
            ("at-max", [.delta(.max), .delta(1), .delta(-1)]),
            ("below-min", [.delta(.min), .delta(-1)]),
            ("setting", [.latest("en"), .empty, .latest("fr")]),
        ]
        for (name, payloads) in posts {
            for payload in payloads { app.notificationCenter.post(name: name, payload: payload) }
        }
        _ = received.take()
        #expect(try await app.enterForeground() == .active)
        #expect(received.all == [
            "willEnterForeground background",
            "then-empty delta(5) x2",
            "empty-first delta(3) x2",
            "negative delta(-12) x3",
            "past-max-and-back delta(-2) x4",
            "at-max delta(\(Int.max)) x3",
            "below-min delta(\(Int.min)) x2",
            "setting latest(\"fr\") x3",
            "didBecomeActive active",
        ])
    }

    // MARK: 6. Soft-limit warnings

    @Test func softLimitWarningsAreDeliveredToRunningAppsAndRearmedWhenTheLimitChanges() async throws {
        let system = try Self.quietSystem()
        let warnings = SharedLog<String>()
        func ballast(_ mebibytes: Int) -> @Sendable () -> sending any AppDelegate {
            { [registry = system.registry] in
                let delegate = BallastDelegate(bytes: mebibytes * mebibyte, heap: registry.heap(for:), onFailure: recordIssue)
                delegate.onMemoryWarning = { app, _ in warnings.append("\(app.identifier) warned in \(app.systemState)") }
                return delegate
            }
        }
        // Over its soft limit in every state: it launches into the background and suspends before the
        // system runs.
        let sleeper = try system.register(
            .test("sleeper"), configuration: .patient(),
            limits: AppMemoryLimits(foreground: .init(softBytes: 2 * mebibyte), background: .init(softBytes: 2 * mebibyte)),
            makeDelegate: ballast(4)
        )
        #expect(try await sleeper.launch(options: LaunchOptions(reason: .backgroundEvent("fetch"))) == .suspended)
        // Over both its limits, a lower one in the background.
        let mover = try system.register(
            .test("mover"), configuration: .patient(),
            limits: AppMemoryLimits(foreground: .init(softBytes: 8 * mebibyte), background: .init(softBytes: 4 * mebibyte)),
            makeDelegate: ballast(12)
        )
        try await mover.launch()
        let softLimitDeliveries = SharedLog<Int>()
        let observation = system.events.observe { event in
            if case .warning(let delivery, .softLimit) = event { softLimitDeliveries.append(delivery.appsReached) }
        }
        try await system.running {
            // The mover is warned once in the foreground; the suspended sleeper not at all.
            #expect(await eventually { warnings.all.contains("mover warned in active") })
            #expect(await system.monitor.samples(10))
            #expect(warnings.all == ["mover warned in active"])
            // Back in the foreground, still over: the sleeper is warned now.
            #expect(try await sleeper.enterForeground() == .active)
            #expect(await eventually { warnings.all.contains("sleeper warned in active") })
            // In the background the mover's limit is lower: a new crossing, a new warning.
            _ = try mover.beginBackgroundTask { _ in }
            #expect(try await mover.enterBackground() == .background)
            #expect(await eventually { warnings.all.contains("mover warned in background") })
            #expect(await system.monitor.samples(10))
        }
        #expect(warnings.all == ["mover warned in active", "sleeper warned in active", "mover warned in background"])
        // Every soft-limit warning recorded reached its app.
        #expect(softLimitDeliveries.all == [1, 1, 1])
        withExtendedLifetime(observation) {}
        await system.shutDown()
    }

    // MARK: 7. A pressure termination takes the state it chose

    @Test func aPressureTerminationTakesOnlyTheStateItChose() async throws {
        let baseline = try settledResidentBytes()
        // On a clock the test steps: nothing here waits for a deadline, and the samples under
        // pressure below come at stepped instants.
        let clock = ManualClock()
        var systemConfiguration = try MemorySystem.Configuration.test(targetBytes: baseline + 32 * mebibyte, logger: silentLogger)
        systemConfiguration.clock = clock
        let system = try MemorySystem(configuration: systemConfiguration)
        let fromForeground = SharedLog<String>()
        let observation = system.lifecycleEvents.observe { event in
            if case .terminated(let app, .systemPressure, let state) = event, state == .active || state == .inactive {
                fromForeground.append("\(app) from \(state)")
            }
        }
        let terminator = system.terminator
        let configuration = AppConfiguration.patient()

        // Chosen while suspended, or in the background, then brought back to the foreground: left alone.
        let returning = try system.register(.test("returning"), configuration: configuration) { StateReadingDelegate() }
        try await returning.launch()
        for chosenIn in [AppState.suspended, .background] {
            if chosenIn == .background { _ = try returning.beginBackgroundTask { _ in } }
            #expect(try await returning.enterBackground() == chosenIn)
            let chosen = returning.systemState
            #expect(try await returning.enterForeground() == .active)
            let record = await terminator.terminate(returning, reason: .systemPressure, step: .terminateSuspended, from: [chosen])
            #expect(record == nil)
            #expect(returning.state == .active)
        }

        // Racing its return to the foreground, a termination for pressure either wins, from the state
        // it chose, or leaves the app in the foreground.
        let racer = try system.register(.test("racer"), configuration: configuration) { StateReadingDelegate() }
        var outcomes: [String: Int] = [:]
        for round in 0..<200 {
            if racer.state == .notRunning { try await racer.launch() }
            if racer.state == .active {
                if round.isMultiple(of: 2) { _ = try racer.beginBackgroundTask { _ in } }
                try await racer.enterBackground()
            }
            let chosen = racer.systemState
            async let returned = try? racer.enterForeground()
            async let record = terminator.terminate(
                racer, reason: .systemPressure, step: chosen == .suspended ? .terminateSuspended : .terminateBackground, from: [chosen]
            )
            let (state, termination) = await (returned, record)
            if let termination {
                #expect(termination.state == chosen)
                #expect(state == nil)
                outcomes["terminated from \(chosen)", default: 0] += 1
            } else {
                #expect(state == .active)
                #expect(racer.state == .active)
                outcomes["back from \(chosen)", default: 0] += 1
            }
            for task in racer.record.withLock({ Array($0.machine.backgroundTasks.keys) }) { try? racer.endBackgroundTask(task) }
        }
        #expect(outcomes.values.reduce(0, +) == 200)

        // Under real pressure the ladder terminates the suspended app and stops there, over target,
        // rather than touch an active or an inactive one.
        let journal = TestAppJournal()
        let registry = system.registry
        let active = try system.register(.test("active-64"), configuration: .patient()) { ballastDelegate(64, registry: registry, journal: journal) }
        let inactive = try system.register(.test("inactive-64"), configuration: .patient()) { ballastDelegate(64, registry: registry, journal: journal) }
        let suspended = try system.register(.test("suspended-8"), configuration: .patient()) { ballastDelegate(8, registry: registry, journal: journal) }
        for app in [returning, racer] where app.state != .notRunning { try await app.terminate(reason: .explicit) }
        try await active.launch()
        try await inactive.launch()
        try await inactive.deactivate()
        try await suspended.launch()
        #expect(try await suspended.enterBackground() == .suspended)
        try await system.running {
            // The run that terminates the suspended app, then one more at critical, over target,
            // with nothing left that the ladder may terminate: the ladder rests there, and samples
            // go on for a while in which it could still go wrong.
            let restsOverTarget = {
                let runs = system.ladderRuns
                guard let first = runs.firstIndex(where: { $0.terminated(in: .terminateSuspended) }) else { return false }
                return runs[(first + 1)...].contains { $0.level == .critical && $0.latency == nil }
            }
            #expect(await clock.step(by: .milliseconds(20), times: 500, handledBy: system, until: restsOverTarget))
            #expect(restsOverTarget())
            // Twenty-five samples more, the ladder done with each: what is checked below holds at
            // that instant.
            #expect(await clock.step(by: .milliseconds(20), times: 25, handledBy: system))
        }
        #expect(system.terminations.filter { $0.reason == .systemPressure && $0.app != racer.identifier }.map(\.app) == [suspended.identifier])
        #expect(active.state == .active)
        #expect(inactive.state == .inactive)
        #expect(fromForeground.all.isEmpty)
        withExtendedLifetime(observation) {}
        await system.shutDown()
    }

    // MARK: 8. Launch deadline

    @Test func launchHasADeadline() async throws {
        #expect(AppConfiguration.default.launchDeadline == .seconds(5))
        #expect(try AppConfiguration().launchDeadline == .seconds(5))
        #expect(throws: MemoryPressureError.self) { try AppConfiguration(launchDeadline: .zero) }

        let system = try Self.quietSystem()
        let deadline = Duration.milliseconds(200)
        let configuration = try AppConfiguration(launchDeadline: deadline)
        // didFinishLaunching blocks: the watchdog ends the launch from outside the run loop.
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        let blocked = SharedBox(true)
        let stuck = try system.register(.test("stuck"), configuration: configuration) {
            let delegate = StateReadingDelegate()
            delegate.hooks[.didFinishLaunching] = { _ in
                if blocked.value { _ = gate.wait(timeout: .now() + 60) }
            }
            return delegate
        }
        let state = await withDeadline(.seconds(30)) { try? await stuck.launch() }
        #expect(state == .notRunning)
        #expect(stuck.terminationReason == .launchDeadline)
        blocked.value = false
        gate.signal()
        #expect(try await stuck.launch() == .active)
        #expect(await system.terminationRecord(of: stuck.identifier)?.reason == .launchDeadline)

        // The two launch callbacks share the deadline: each within it, together over it.
        let slow = try system.register(.test("slow"), configuration: configuration) {
            let delegate = StateReadingDelegate()
            delegate.hooks[.willFinishLaunching] = { _ in Self.block(for: deadline * 0.6) }
            delegate.hooks[.didFinishLaunching] = { _ in Self.block(for: deadline * 0.6) }
            return delegate
        }
        #expect(try await slow.launch() == .notRunning)
        #expect(slow.terminationReason == .launchDeadline)
        await system.shutDown()
    }

    // MARK: 9. No overkill

    /// Under a sanitizer its allocator, not jemalloc, serves Swift's allocations: the premise does
    /// not hold.
    @Test(.disabled(if: Sanitizers.areActive, "a sanitizer's allocator serves malloc instead of jemalloc"))
    func aTerminationIsNotRepeatedForMemoryItAlreadyFreed() async throws {
        // Two suspended apps whose delegates hold 96 MiB each in ordinary Swift arrays of 8 KiB (the
        // shared arenas' small size classes, not their heaps): freed, such memory stays resident,
        // in the freeing thread's cache and the arenas' dirty pages, until it is given back. The
        // first termination alone brings the footprint under the target by half an app's
        // footprint: it must be the only one.
        let baseline = try settledResidentBytes()
        var probe: [[UInt8]]? = HoardingDelegate.hoard(bytes: 96 * mebibyte)
        let footprint = try settledResidentBytes() - baseline
        withExtendedLifetime(probe) { probe = nil }
        try Jemalloc.flushThreadCache()
        let thresholds = try MemoryBudget.Thresholds(warning: 0.80, critical: 0.82, warningRecovery: 0.78, criticalRecovery: 0.80)
        let system = try MemorySystem(configuration: .test(
            targetBytes: try settledResidentBytes() + footprint * 3 / 2, thresholds: thresholds, logger: silentLogger
        ))
        let hoarders = try ["hoarder-a", "hoarder-b"].map { name in
            try system.register(.test(name), configuration: .patient()) { HoardingDelegate(bytes: 96 * mebibyte) }
        }
        for app in hoarders {
            try await app.launch()
            #expect(try await app.enterBackground() == .suspended)
        }
        let events = system.events.stream()
        try await system.running {
            let run = await events.first { $0.runUnderTarget != nil }?.runUnderTarget
            #expect(run?.steps.first { $0.step == .terminateSuspended }?.terminated.count == 1)
            // Later samples find it under target: nothing more to do.
            #expect(await system.monitor.samples(10))
        }
        #expect(system.terminations.count == 1)
        #expect(hoarders.filter { $0.state == .suspended }.count == 1)
        await system.shutDown()
    }

    // MARK: 10. The background purge follows the state

    @Test func theBackgroundPurgeSparesAnAppBackInTheForeground() async throws {
        let system = try Self.quietSystem()
        let configuration = AppConfiguration.patient()
        let returningEntered = DispatchSemaphore(value: 0)
        let returningGate = DispatchSemaphore(value: 0)
        defer { returningGate.signal() }
        let caches = SharedBox<[String: PurgeableCache<Int, Int>]>([:])
        let fill: @Sendable (isolated App) -> Void = { app in
            let name = app.identifier.rawValue
            guard let cache = try? PurgeableCache<Int, Int>(name: name, owner: app.identifier, category: .images) else { return }
            for key in 1...4 { try? cache.setValue(key, forKey: key, cost: 10) }
            system.register(cache)
            caches.update { $0[name] = cache }
        }
        // Goes Home and is brought back while its didEnterBackground still runs: the purge that
        // follows the callback finds it in the foreground.
        let returning = try system.register(.test("returning"), configuration: configuration) {
            let delegate = StateReadingDelegate()
            delegate.hooks[.didFinishLaunching] = { app in fill(app) }
            delegate.hooks[.didEnterBackground] = { _ in
                returningEntered.signal()
                _ = returningGate.wait(timeout: .now() + 60)
            }
            return delegate
        }
        // Goes Home and stays there: purged.
        let marker = try system.register(.test("marker"), configuration: configuration) {
            let delegate = StateReadingDelegate()
            delegate.hooks[.didFinishLaunching] = { app in fill(app) }
            return delegate
        }
        try await system.running {
            for app in [returning, marker] { try await app.launch() }
            async let home = returning.enterBackground()
            #expect(await Self.wait(for: returningEntered))
            async let back = returning.enterForeground()
            #expect(await eventually { returning.systemState == .active })
            returningGate.signal()
            _ = try await home
            #expect(try await back == .active)
            #expect(try await marker.enterBackground() == .suspended)
        }
        #expect(caches.value["returning"]?.keysInEvictionOrder == [1, 2, 3, 4])
        #expect(caches.value["marker"]?.keysInEvictionOrder == [])
        await system.shutDown()
    }

    // MARK: 11. Why the last instance ended

    @Test func launchOptionsTellWhyThePreviousInstanceEnded() async throws {
        let system = try Self.quietSystem()
        let told = SharedLog<TerminationReason?>()
        let app = try system.register(.test("relauncher"), configuration: .patient(backgroundTime: .milliseconds(100))) {
            let delegate = StateReadingDelegate()
            delegate.onLaunch = { _, options in told.append(options.previousTermination) }
            // A task never ended: the background time runs out.
            delegate.hooks[.didEnterBackground] = { app in _ = try? app.beginBackgroundTask { _ in } }
            return delegate
        }
        // The first launch: not terminated before. Then each reason, given by the terminator.
        try await app.launch()
        for reason in TerminationReason.allCases {
            try await app.terminate(reason: reason)
            try await app.launch()
        }
        // A reason the system reached on its own.
        try await app.terminate(reason: .explicit)
        try await app.launch()
        #expect(try await app.enterBackground() == .background)
        #expect(await eventually { app.state == .notRunning })
        try await app.launch()
        #expect(told.all == [nil] + TerminationReason.allCases + [.explicit, .backgroundTaskExpired])
        await system.shutDown()
    }

    /// Blocks the calling thread (an app's run loop) for `duration`.
    static func block(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .nanoseconds(nanoseconds))
    }

    /// Waits, off the cooperative pool, until `semaphore` is signalled; false after 30 s.
    static func wait(for semaphore: DispatchSemaphore) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: semaphore.wait(timeout: .now() + 30) == .success)
            }
        }
    }
}

/// An app's code that records each callback with the state ``App/state`` reads there in `log`
/// (`"didEnterBackground background"`) and the state the system has moved the app to in
/// `systemLog`, then runs the hook a test set for it.
final class StateReadingDelegate: AppDelegate {
    let log: SharedLog<String>
    let systemLog: SharedLog<String>
    var hooks: [LifecycleCallback: @Sendable (isolated App) -> Void] = [:]
    /// Runs in `didFinishLaunching`, with the launch options, before its hook.
    var onLaunch: (@Sendable (isolated App, LaunchOptions) -> Void)?

    init(log: SharedLog<String> = SharedLog(), systemLog: SharedLog<String> = SharedLog()) {
        self.log = log
        self.systemLog = systemLog
    }

    private func record(_ callback: LifecycleCallback, _ app: isolated App) {
        log.append("\(callback) \(app.state)")
        systemLog.append("\(callback) \(app.systemState)")
        hooks[callback]?(app)
    }

    func willFinishLaunching(_ app: isolated App, options: LaunchOptions) { record(.willFinishLaunching, app) }
    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        onLaunch?(app, options)
        record(.didFinishLaunching, app)
    }
    func didBecomeActive(_ app: isolated App) { record(.didBecomeActive, app) }
    func willResignActive(_ app: isolated App) { record(.willResignActive, app) }
    func didEnterBackground(_ app: isolated App) { record(.didEnterBackground, app) }
    func willEnterForeground(_ app: isolated App) { record(.willEnterForeground, app) }
    func willTerminate(_ app: isolated App) { record(.willTerminate, app) }
    func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning) { record(.didReceiveMemoryWarning, app) }
}

/// An app whose delegate holds `bytes` in ordinary Swift arrays of 8 KiB, every byte written:
/// memory in the process's shared arenas, not in the app's heap, freed when the delegate goes with
/// the app.
final class HoardingDelegate: AppDelegate {
    let bytes: Int
    private var hoard: [[UInt8]] = []

    init(bytes: Int) {
        self.bytes = bytes
    }

    static func hoard(bytes: Int) -> [[UInt8]] {
        (0..<(bytes / 8192)).map { _ in [UInt8](repeating: 1, count: 8192) }
    }

    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        hoard = Self.hoard(bytes: bytes)
    }
}

extension MemorySystem {
    /// The record of `app`'s last termination, once its run loop has let go of its memory; nil if
    /// none comes within `limit`.
    func terminationRecord(of app: AppIdentifier, within limit: Duration = .seconds(30)) async -> TerminationRecord? {
        _ = await eventually(within: limit) { terminations.contains { $0.app == app } }
        return terminations.last { $0.app == app }
    }
}

extension LadderRun {
    /// Whether the run terminated an app in `step`.
    func terminated(in step: ReclamationStep) -> Bool {
        steps.contains { $0.step == step && !$0.terminated.isEmpty }
    }
}

extension PressureMonitor {
    /// Whether `count` samples are taken within 30 s from now.
    func samples(_ count: Int) async -> Bool {
        let samples = events.stream()
        return await withDeadline(.seconds(30)) {
            var seen = 0
            for await event in samples {
                if case .sample = event { seen += 1 }
                if seen == count { return true }
            }
            return nil
        } ?? false
    }
}
