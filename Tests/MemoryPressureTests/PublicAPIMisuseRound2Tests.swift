#if canImport(Glibc)
import Glibc
#endif
import Dispatch
@testable import MemoryPressure
import MemoryPressureTestKit
import Synchronization
import Testing

/// A second round of the public API misused, beyond `PublicAPIMisuseTests`, `MisuseTests` and
/// `ProcessAppMisuseTests`: user code released by the library whose deinitializers use it again,
/// shutdowns asked for from several tasks at once, and the system's waits at the edges of
/// `Duration`. Each ends in the documented behaviour or a typed error; none traps, hangs or returns
/// less than it should.
@Suite struct PublicAPIMisuseRound2Tests {
    static func system() throws -> MemorySystem {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
        configuration.logger = silentLogger
        return try MemorySystem(configuration: configuration)
    }

    /// Runs `body` when the last reference to it goes: what a user's object does in its
    /// deinitializer, captured by a closure the library keeps (a handler, an observer).
    final class ReleaseWitness: Sendable {
        let body: @Sendable () -> Void

        init(_ body: @escaping @Sendable () -> Void) {
            self.body = body
        }

        deinit {
            body()
        }
    }

    // MARK: User code released by the library

    /// Opens a background task whose expiration handler alone keeps a witness that, when released,
    /// reads `app` and tries to open another task, as an object that ends its work in `deinit` does.
    static func beginTaskWithWitness(on app: App, heard: SharedLog<String>) throws -> BackgroundTaskIdentifier {
        let witness = ReleaseWitness {
            let opened = (try? app.beginBackgroundTask { _ in }).map { try? app.endBackgroundTask($0) } != nil
            heard.append("released: \(app.openBackgroundTaskCount) open, \(app.state), reason \(app.terminationReason.map { "\($0)" } ?? "-"), opened \(opened)")
        }
        return try app.beginBackgroundTask { _ in withExtendedLifetime(witness) {} }
    }

    @Test func anExpirationHandlersCapturesAreReleasedOutsideTheAppsLockWhenItsTaskEndsOrTheAppIsTerminated() async throws {
        let system = try Self.system()
        let app = try system.register(.test("released-handler"), configuration: .patient()) { IdleDelegate() }
        try await app.launch()
        let heard = SharedLog<String>()
        // Ending the task released its handler under the app's lock: the witness's read of the app
        // took the lock again, and the process trapped ("Recursive call to lock").
        let task = try Self.beginTaskWithWitness(on: app, heard: heard)
        try app.endBackgroundTask(task)
        #expect(heard.take() == ["released: 0 open, active, reason -, opened true"])
        // So did a termination, which drops every open task's handler.
        _ = try Self.beginTaskWithWitness(on: app, heard: heard)
        try await app.terminate(reason: .explicit)
        #expect(await eventually { !heard.all.isEmpty })
        #expect(heard.all == ["released: 0 open, notRunning, reason explicit, opened false"])
        #expect(app.openBackgroundTaskCount == 0)
        // The app goes on as usual.
        #expect(try await app.launch() == .active)
        #expect(try await app.terminate(reason: .explicit) == .notRunning)
    }

    /// Adds an observer to `app`'s center whose closure alone keeps a witness that, when
    /// released, reads the app and posts to its center.
    static func observeWithWitness(_ app: App, heard: SharedLog<String>) {
        let witness = ReleaseWitness {
            app.notificationCenter.post(name: "from-deinit")
            heard.append("released: \(app.state), reason \(app.terminationReason.map { "\($0)" } ?? "-")")
        }
        app.notificationCenter.addObserver(forName: "ping") { _, _ in withExtendedLifetime(witness) {} }
    }

    @Test func aTerminatedAppsObserversAreReleasedOutsideItsLock() async throws {
        let system = try Self.system()
        let app = try system.register(.test("released-observer"), configuration: .patient()) { IdleDelegate() }
        try await app.launch()
        let heard = SharedLog<String>()
        // Terminating the app released its observers under its lock: the witness's read trapped.
        Self.observeWithWitness(app, heard: heard)
        try await app.terminate(reason: .explicit)
        #expect(await eventually { !heard.all.isEmpty })
        #expect(heard.all == ["released: notRunning, reason explicit"])
        // Relaunched, the app's center works, and a post from the released observer was dropped.
        try await app.launch()
        let pings = SharedLog<AppNotification.Name>()
        let token = app.notificationCenter.addObserver(forName: nil) { _, notification in pings.append(notification.name) }
        app.notificationCenter.post(name: "ping")
        #expect(await eventually { pings.all == ["ping"] })
        token.cancel()
        try await app.terminate(reason: .explicit)
    }

    @Test func cancellingAnObserverWhoseClosureHoldsAnotherTokenOfTheSameSourceNeitherTrapsNorLeavesItObserving() async throws {
        let system = try Self.system()
        let app = try system.register(.test("token-in-closure")) { IdleDelegate() }
        let heard = SharedLog<String>()
        // The companion observation lives only as long as the outer observer's closure: a helper
        // that observes for as long as its owner does.
        var companion: ObservationToken? = system.lifecycleEvents.observe { _ in heard.append("companion") }
        let outer = system.lifecycleEvents.observe { [companion] _ in
            withExtendedLifetime(companion) {}
            heard.append("outer")
        }
        companion = nil
        try await app.launch()
        #expect(heard.all.contains("companion") && heard.all.contains("outer"))
        // The outer closure was released under the source's lock; the companion token's
        // cancellation, from its deinitializer, took the lock again and the process trapped.
        outer.cancel()
        heard.clear()
        try await app.terminate(reason: .explicit)
        #expect(heard.all.isEmpty, "neither observer hears after the cancellation: \(heard.all)")
        // The source still delivers to a new observer.
        let later = system.lifecycleEvents.observe { _ in heard.append("later") }
        try await app.launch()
        #expect(heard.all.contains("later"))
        withExtendedLifetime(later) {}
    }

    // MARK: Shutdowns at once

    @Test func shutdownsFromManyTasksAtOnceTerminateEachAppOnceAndEachReturnsOnceItsAppsAreDone() async throws {
        let system = try Self.system()
        // A deadline no stalled thread reaches (a full ThreadSanitizer run stalls threads for 25 s
        // and more): an overrun would change the reasons this test checks.
        let configuration = try AppConfiguration(terminationDeadline: generousDeadline, backgroundTaskTimeLimit: .seconds(600))
        // willTerminate holds its app's termination until every call has asked for it, so that the
        // calls overlap on each app. (Every call finds a running app in use: its termination waits
        // here. The limit only ends a broken test.)
        let asked = SharedBox<[AppIdentifier: (calls: Int, everyCall: DispatchSemaphore)]>([:])
        @Sendable func everyCallAsked(for app: AppIdentifier, counting: Bool = false) -> (calls: Int, everyCall: DispatchSemaphore) {
            asked.update { asked in
                var entry = asked[app] ?? (0, DispatchSemaphore(value: 0))
                if counting { entry.calls += 1 }
                asked[app] = entry
                return entry
            }
        }
        let asking = system.terminator.requests.observe { app in
            let (calls, everyCall) = everyCallAsked(for: app, counting: true)
            if calls == 8 { everyCall.signal() }
        }
        defer { asking.cancel() }
        var apps: [App] = []
        for (index, state) in [AppState.active, .inactive, .background, .suspended, .active].enumerated() {
            let app = try system.register(.test("shut-\(index)"), configuration: configuration) {
                let delegate = RecordingDelegate()
                delegate.onWillTerminate = { app in
                    let everyCall = everyCallAsked(for: app.identifier).everyCall
                    _ = everyCall.wait(timeout: .now() + 60)
                    everyCall.signal()
                }
                return delegate
            }
            try await PublicAPIMisuseTests.bring(app, to: state)
            apps.append(app)
        }
        let identifiers = Set(apps.map(\.identifier))
        let hosted = apps
        let stillRunning = SharedLog<String>()
        // A service's signal handler and its lifecycle both shut the system down: before, only the
        // first call to reach an app got its record, and the others returned at once, while its
        // willTerminate still ran; so every call could return short, and before the apps were done.
        let calls = await withTaskGroup(of: [TerminationRecord].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let records = await system.shutDown()
                    for app in hosted where app.state != .notRunning {
                        stillRunning.append("\(app.identifier) \(app.state)")
                    }
                    return records
                }
            }
            var calls: [[TerminationRecord]] = []
            for await records in group { calls.append(records) }
            return calls
        }
        #expect(stillRunning.all.isEmpty, "a shutdown returned before its apps were terminated: \(stillRunning.all)")
        let records = calls.flatMap { $0 }
        #expect(Set(records.map(\.app)) == identifiers, "every app's record comes back from a shutdown")
        for identifier in identifiers {
            let terminations = system.terminations.filter { $0.app == identifier }
            #expect(terminations.count == 1, "\(identifier) terminated once: \(terminations)")
            // Every call that returned its record returned that one termination.
            #expect(records.filter { $0.app == identifier }.allSatisfy { $0 == terminations.first })
        }
        #expect(records.allSatisfy { $0.reason == .explicit })
        // Nothing is left for a later shutdown, and the apps launch again.
        #expect(await system.shutDown().isEmpty)
        #expect(try await apps[0].launch() == .active)
        #expect(await system.shutDown().map(\.app) == [apps[0].identifier])
    }

    // MARK: The system's waits at the edges

    @Test(arguments: [Duration.seconds(Int64.max), .seconds(3601), .nanoseconds(-1), .milliseconds(-999), .seconds(Int64.min)])
    func aWarningTimeoutOrAdmissionWaitOutsideZeroToAnHourIsATypedError(wait: Duration) throws {
        // An admission wait of Int64.max seconds overflowed the deadline of the first allocation
        // that waited for room (a trap); a negative one could make it spin.
        for (setting, apply) in [
            ("warningTimeout", { (configuration: inout MemorySystem.Configuration) in configuration.warningTimeout = wait }),
            ("admissionWait", { (configuration: inout MemorySystem.Configuration) in configuration.admissionWait = wait }),
        ] as [(String, (inout MemorySystem.Configuration) -> Void)] {
            var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
            configuration.logger = silentLogger
            apply(&configuration)
            let error = #expect(throws: MemoryPressureError.self, "\(setting) \(wait)") { _ = try MemorySystem(configuration: configuration) }
            #expect(error?.code == .invalidConfiguration)
            #expect(error.map { "\($0)".contains(setting) && "\($0)".contains("expected") } == true, "\(String(describing: error))")
        }
    }

    @Test func waitsAtTheEndsOfTheirRangeAreAccepted() async throws {
        for wait in [MemorySystem.Configuration.acceptedWaits.lowerBound, MemorySystem.Configuration.acceptedWaits.upperBound] {
            var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
            configuration.logger = silentLogger
            configuration.warningTimeout = wait
            configuration.admissionWait = wait
            let system = try MemorySystem(configuration: configuration)
            let heap = try system.heap(for: .test("waits"))
            try await system.running {
                #expect(await eventually { system.monitor.latestSample != nil })
                // Far under the budget, an allocation is admitted whatever the wait.
                let buffer = try heap.allocate(byteCount: 1 << 20)
                #expect(heap.allocatedBytes == 1 << 20)
                withExtendedLifetime(buffer) {}
            }
        }
    }
}

extension PublicAPIMisuseRound2Tests {
    // MARK: View-controller trees and view hierarchies

    /// A controller that says when it is released, with `view` as its view.
    final class WitnessController: ViewController {
        let released: SharedLog<String>
        let loaded: View

        init(released: SharedLog<String>, view: View = View()) {
            self.released = released
            loaded = view
        }

        override func loadView() -> View {
            loaded
        }

        deinit {
            released.append("controller")
        }
    }

    @Test func aControllerOrViewAddedInsideItselfIsRefusedAndTheTreeStaysATree() {
        let root = ViewController()
        let child = ViewController()
        let grandchild = ViewController()
        #expect(root.addChild(child))
        #expect(child.addChild(grandchild))
        // Each made a cycle: the controllers kept one another alive, and a memory warning's walk
        // of the tree never ended.
        #expect(!root.addChild(root))
        #expect(!grandchild.addChild(root))
        #expect(!grandchild.addChild(child))
        #expect(root.parent == nil && root.children.map(ObjectIdentifier.init) == [ObjectIdentifier(child)])
        #expect(child.parent === root && child.children.map(ObjectIdentifier.init) == [ObjectIdentifier(grandchild)])
        #expect(grandchild.parent === child && grandchild.children.isEmpty)
        // A descendant moved up is not a cycle.
        #expect(root.addChild(grandchild))
        #expect(grandchild.parent === root && child.children.isEmpty)

        let outerStore = FakeStore(byteCount: 10)
        let innerStore = FakeStore(byteCount: 20)
        let outer = View(backingStore: outerStore)
        let inner = View(backingStore: innerStore)
        #expect(outer.addSubview(inner))
        // A view inside itself made marking visibility recurse without end (a stack overflow).
        #expect(!outer.addSubview(outer))
        #expect(!inner.addSubview(outer))
        #expect(inner.subviews.isEmpty && outer.subviews.count == 1)
        let controller = WitnessController(released: SharedLog(), view: outer)
        _ = controller.view
        controller.isVisible = true
        #expect(outerStore.isVisible && innerStore.isVisible)
    }

    @Test func aTerminatedAppsControllersAreReleasedEvenAfterItTriedToAddOneInsideItself() async throws {
        let system = try Self.system()
        let released = SharedLog<String>()
        let app = try system.register(.test("self-child")) {
            let delegate = RecordingDelegate()
            delegate.onDidFinishLaunching = { app, _ in
                let root = WitnessController(released: released)
                let child = ViewController()
                root.addChild(root)
                root.addChild(child)
                child.addChild(root)
                app.rootViewController = root
            }
            return delegate
        }
        try await app.launch()
        try await app.terminate(reason: .explicit)
        // The root held itself (or its child held it): it outlived its app, with all it held.
        #expect(await eventually { released.all == ["controller"] })
    }
}
