import Dispatch
@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Testing

@Suite(.timeLimit(.minutes(1)))
struct WarningDeliveryTests {
    /// A controller that counts its warnings and logs them.
    final class CountingController: ViewController {
        let name: String
        let log: SharedLog<String>
        let counts: SharedBox<[String: Int]>

        init(name: String, log: SharedLog<String>, counts: SharedBox<[String: Int]>) {
            self.name = name
            self.log = log
            self.counts = counts
        }

        override func didReceiveMemoryWarning() {
            super.didReceiveMemoryWarning()
            log.append("controller \(name)")
            counts.update { $0[name, default: 0] += 1 }
        }
    }

    /// An app whose launch builds a tree of `controllers` controllers (a root with the rest as
    /// children) and registers `observers` warning observers, each counting into `counts`.
    static func makeWarnedApp(
        _ name: String, controllers: Int, observers: Int, log: SharedLog<String> = SharedLog<String>(),
        counts: SharedBox<[String: Int]>
    ) throws -> App {
        // A long background time: the apps kept in the background by a task must still run when the
        // test ends them, however slowly a loaded machine (or ThreadSanitizer) runs the test; with the
        // default 30 s, one ran out under ThreadSanitizer in CI and was ended before the test did.
        try makeApp(name, log: log, configuration: try AppConfiguration(backgroundTaskTimeLimit: .seconds(600))) { delegate in
            delegate.onDidFinishLaunching = { app, _ in
                let root = CountingController(name: "\(name)/vc0", log: log, counts: counts)
                for index in 1..<controllers {
                    root.addChild(CountingController(name: "\(name)/vc\(index)", log: log, counts: counts))
                }
                app.rootViewController = root
                for index in 0..<observers {
                    app.notificationCenter.addObserver(forName: .didReceiveMemoryWarning) { _, _ in
                        log.append("observer \(index)")
                        counts.update { $0["\(name)/observer\(index)", default: 0] += 1 }
                    }
                }
            }
            delegate.onMemoryWarning = { _, _ in counts.update { $0["\(name)/delegate", default: 0] += 1 } }
        }
    }

    @Test func eachDelegateControllerAndObserverHearsAWarningExactlyOnceAcross100Apps() async throws {
        // One tally per app, touched only on that app's run loop.
        let tallies = (0..<100).map { _ in SharedBox<[String: Int]>([:]) }
        let apps = try (0..<100).map {
            try Self.makeWarnedApp("app\($0)", controllers: 10, observers: 10, counts: tallies[$0])
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, app) in apps.enumerated() {
                group.addTask {
                    try await app.launch()
                    if index % 3 == 1 { try await app.deactivate() }
                    if index % 3 == 2 {
                        _ = try app.beginBackgroundTask { _ in }
                        try await app.enterBackground()
                    }
                }
            }
            try await group.waitForAll()
        }
        let warning = MemoryWarning(level: .warning)
        let delivery = await warning.deliver(to: apps) { _ in 1 }
        #expect(delivery.appsReached == 100)
        #expect(delivery.delegatesReached == 100)
        #expect(delivery.viewControllersReached == 1000)
        #expect(delivery.observersReached == 1000)
        #expect(delivery.duration > .zero)
        let heard = tallies.reduce(into: [String: Int]()) { $0.merge($1.value) { $0 + $1 } }
        #expect(heard.count == 100 * (1 + 10 + 10))
        #expect(heard.values.allSatisfy { $0 == 1 })
        for app in apps {
            try await app.terminate(reason: .explicit)
        }
    }

    @Test func withinAnAppTheDelegateComesFirstThenControllersParentsFirstThenObservers() async throws {
        let log = SharedLog<String>()
        let counts = SharedBox<[String: Int]>([:])
        let app = try Self.makeWarnedApp("ordered", controllers: 3, observers: 2, log: log, counts: counts)
        try await app.launch()
        log.clear()
        _ = await MemoryWarning(level: .critical).deliver(to: [app]) { _ in 0 }
        #expect(log.all == [
            "didReceiveMemoryWarning",
            "controller ordered/vc0", "controller ordered/vc1", "controller ordered/vc2",
            "observer 0", "observer 1",
        ])
    }

    @Test func suspendedAndNotRunningAppsAreNeverWarned() async throws {
        let counts = SharedBox<[String: Int]>([:])
        let suspended = try Self.makeWarnedApp("suspended", controllers: 2, observers: 2, counts: counts)
        let stopped = try Self.makeWarnedApp("stopped", controllers: 2, observers: 2, counts: counts)
        try await suspended.launch()
        try await suspended.enterBackground()
        counts.value = [:]
        let delivery = await MemoryWarning(level: .critical).deliver(to: [suspended, stopped]) { _ in 1 }
        #expect(delivery.order.isEmpty)
        #expect(delivery.delegatesReached == 0)
        #expect(counts.value.isEmpty)
        // Nor is the warning queued for the suspended app's return.
        try await suspended.enterForeground()
        #expect(counts.value.isEmpty)
    }

    @Test func appsAreWarnedLeastImportantAndLargestFirst() async throws {
        let counts = SharedBox<[String: Int]>([:])
        let footprints = ["small-bg": 10, "large-bg": 30, "inactive": 500, "active": 900, "suspended": 2000]
        var apps: [App] = []
        for name in footprints.keys.sorted() {
            let app = try Self.makeWarnedApp(name, controllers: 1, observers: 0, counts: counts)
            try await app.launch()
            switch name {
            case "small-bg", "large-bg":
                _ = try app.beginBackgroundTask { _ in }
                try await app.enterBackground()
            case "inactive": try await app.deactivate()
            case "suspended": try await app.enterBackground()
            default: break
            }
            apps.append(app)
        }
        let delivery = await MemoryWarning(level: .warning).deliver(to: apps) { footprints[$0.identifier.rawValue] ?? 0 }
        #expect(delivery.order.map(\.rawValue) == ["large-bg", "small-bg", "inactive", "active"])
        #expect(delivery.appsReached == 4)
        for app in apps {
            try await app.terminate(reason: .explicit)
        }
    }

    @Test func theWarningReachesObserversAsANotificationAndControllersReleaseHiddenStores() async throws {
        let store = FakeStore(byteCount: 1 << 20)
        let received = SharedBox<MemoryWarning?>(nil)
        let app = try makeApp("photos") { delegate in
            delegate.onDidFinishLaunching = { app, _ in
                let controller = ViewController()
                controller.view.backingStore = store
                app.rootViewController = controller
                app.notificationCenter.addObserver(forName: .didReceiveMemoryWarning) { _, notification in
                    if case .memoryWarning(let warning) = notification.payload { received.value = warning }
                }
            }
        }
        try await app.launch()
        let warning = MemoryWarning(level: .critical)
        _ = await warning.deliver(to: [app]) { _ in 0 }
        #expect(received.value == warning)
        #expect(store.byteCount == 0)
    }

    @Test func anAppBlockedInItsWarningDoesNotHoldTheDeliveryPastItsTimeout() async throws {
        let release = Completion<Void>()
        let counts = SharedBox<[String: Int]>([:])
        let blocked = try makeApp("blocked") { delegate in
            delegate.onMemoryWarning = { _, _ in
                // Blocks the run loop until the test lets go, as a stuck observer would.
                let semaphore = DispatchSemaphore(value: 0)
                Task.detached { await release.value; semaphore.signal() }
                semaphore.wait()
            }
        }
        let responsive = try Self.makeWarnedApp("responsive", controllers: 2, observers: 3, counts: counts)
        try await blocked.launch()
        try await responsive.launch()

        let delivery = await MemoryWarning(level: .warning).deliver(to: [blocked, responsive], timeout: .milliseconds(200)) { _ in 0 }
        release.resolve(())

        #expect(delivery.appsTimedOut == [blocked.identifier])
        #expect(delivery.appsReached == 1)
        #expect(delivery.viewControllersReached == 2)
        #expect(delivery.observersReached == 3)
        #expect(counts.value["responsive/delegate"] == 1)
    }
}
