import Benchmark
import BenchmarkSupport
@_spi(Benchmarks) import MemoryPressure

/// An app whose launch builds a view-controller tree of `controllers` (a root with the rest as its
/// children) and registers `observers` memory-warning observers.
struct FanOutDelegate: AppDelegate {
    let controllers: Int
    let observers: Int

    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        let root = ViewController()
        for _ in 1..<controllers { root.addChild(ViewController()) }
        app.rootViewController = root
        for _ in 0..<observers {
            app.notificationCenter.addObserver(forName: .didReceiveMemoryWarning) { _, _ in }
        }
    }
}

/// The threads of the suite's apps, which no memory system hosts: one group for them all.
let fanOutThreads = AppThreadGroup()

/// `count` launched (active) apps of `controllers` controllers and `observers` observers each.
func launchedApps(_ count: Int, controllers: Int, observers: Int) async throws -> [App] {
    var apps: [App] = []
    for index in 0..<count {
        let app = App(
            identifier: try AppIdentifier("app\(index)"),
            delegate: FanOutDelegate(controllers: controllers, observers: observers),
            threads: fanOutThreads
        )
        try await app.launch()
        apps.append(app)
    }
    return apps
}

/// One warning delivered to `apps`, checked to have reached every delegate, controller and
/// observer: a benchmark that silently reached nobody would measure nothing.
func deliverWarning(to apps: [App], expecting expected: (controllers: Int, observers: Int)) async {
    let delivery = await MemoryWarning(level: .warning).deliver(to: apps) { _ in 0 }
    precondition(
        delivery.delegatesReached == apps.count
            && delivery.viewControllersReached == expected.controllers
            && delivery.observersReached == expected.observers,
        "the warning reached \(delivery.delegatesReached) delegates, \(delivery.viewControllersReached) controllers and \(delivery.observersReached) observers"
    )
}

/// The time from posting one memory warning until every running app has delivered it to its
/// delegate, its view-controller tree and its observers (`MemoryWarning.deliver(to:footprint:)`).
/// Apps are launched before the measurement and terminated after it.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = RunMode.current.configuration(
        timed: [.wallClock], timeUnits: .microseconds, maxDuration: .seconds(5), maxIterations: 50
    )

    /// The benchmark `name`: a warning to `apps` apps of `controllers` controllers and `observers`
    /// observers each.
    func fanOut(_ name: String, apps: Int, controllers: Int, observers: Int) {
        Benchmark(name) { benchmark in
            let launched = try await launchedApps(apps, controllers: controllers, observers: observers)
            benchmark.startMeasurement()
            await deliverWarning(to: launched, expecting: (apps * controllers, apps * observers))
            benchmark.stopMeasurement()
            for app in launched { try await app.terminate(reason: .explicit) }
        }
    }

    fanOut("Fan-out-100-apps-x-10-controllers-x-10-observers", apps: 100, controllers: 10, observers: 10)
    fanOut("Fan-out-10000-observers-one-app", apps: 1, controllers: 1, observers: 10_000)
}
