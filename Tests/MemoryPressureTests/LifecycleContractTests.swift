import Dispatch
@_spi(Benchmarks) @testable import MemoryPressure
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

    /// Time limits an app's code never reaches, with background time `backgroundTime`.
    static func patient(backgroundTime: Duration = .seconds(600)) throws -> AppConfiguration {
        try AppConfiguration(
            launchDeadline: .seconds(60), backgroundDeadline: .seconds(60), terminationDeadline: .seconds(60),
            backgroundTaskTimeLimit: backgroundTime
        )
    }

    // MARK: 3. Nothing after willTerminate

    @Test func nothingMovesAnAppOutOfItsTermination() async throws {
        let system = try Self.quietSystem()
        let lifecycle = system.lifecycleEvents.stream()
        let configuration = try Self.patient()

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
        #expect(await eventually { interrupted.record.withLock { $0.isTerminating } })
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
        let phoenix = try system.register(.test("phoenix"), configuration: patient()) {
            let delegate = StateReadingDelegate(log: log)
            delegate.hooks[.willTerminate] = { app in
                // Work of the run loop after willTerminate, ahead of the warning posted below.
                app.perform { _ in _ = busy.wait(timeout: .now() + 60) }
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
    }

    // MARK: 4. No app code while suspended

    @Test func noAppCodeRunsWhileItsAppIsSuspended() async throws {
        let system = try Self.quietSystem()
        let configuration = try Self.patient()

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
                app.perform { _ in _ = busy.wait(timeout: .now() + 60) }
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

        try await Self.evictionHandlersOfASuspendedAppAreNotCalled(in: system)
    }

    /// The caches of an app that is suspended are purged without calling into it; an eviction
    /// handler under way when its app would suspend holds the suspension off until it returns.
    static func evictionHandlersOfASuspendedAppAreNotCalled(in system: MemorySystem) async throws {
        let configuration = try patient()
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
        // The archive suspends while the gallery's purge blocks the one ahead of its own.
        let archive = try system.register(.test("archive"), configuration: configuration) {
            let delegate = StateReadingDelegate()
            delegate.hooks[.didFinishLaunching] = { app in makeCache(app, false) }
            return delegate
        }
        let events = system.events.stream()
        try await system.running {
            try await gallery.launch()
            try await archive.launch()
            #expect(try await gallery.enterBackground() == .background)
            #expect(await wait(for: entered))
            try gallery.endBackgroundTask(try #require(task.value))
            #expect(gallery.state == .background)
            #expect(try await archive.enterBackground() == .suspended)
            gate.signal()
            let archivePurge = await events.first { event in
                guard case .purge(let report, .enteringBackground) = event else { return false }
                return report.entries.contains { $0.app == archive.identifier }
            }
            #expect(archivePurge != nil)
        }
        #expect(gallery.state == .suspended)
        // The gallery's handlers ran while it was in the background, all of them.
        #expect(evictions.all.filter { $0.hasPrefix("gallery") } == [
            "gallery 1 began in background", "gallery 1 ended in background",
            "gallery 2 began in background", "gallery 2 ended in background",
        ])
        // The archive's cache was emptied of what may go without asking, its discardable content
        // kept, and its handler never called.
        #expect(!evictions.all.contains { $0.hasPrefix("archive") })
        let archiveCache = try #require(caches.value["archive"])
        #expect(archiveCache.keysInEvictionOrder == [2])
        #expect((archiveCache.value(forKey: 2) as? TestContent)?.isContentDiscarded == false)
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
extension MemorySystem {
    /// The record of `app`'s last termination, once its run loop has let go of its memory; nil if
    /// none comes within `limit`.
    func terminationRecord(of app: AppIdentifier, within limit: Duration = .seconds(30)) async -> TerminationRecord? {
        _ = await eventually(within: limit) { terminations.contains { $0.app == app } }
        return terminations.last { $0.app == app }
    }
}
