import Benchmark
import BenchmarkSupport
@_spi(Benchmarks) import MemoryPressure
import MemoryPressureTestKit

/// The manager's own heap bytes per app, per registered cache and per observer, measured as the
/// growth of jemalloc's allocated bytes while many are made on this thread (see `HeapUsage`).
/// Bytes per cache entry are measured, beside NSCache's, in the Caches suite.
let bytesPerApp = BenchmarkMetric.custom("bytes per app", useScalingFactor: false)
let bytesPerCache = BenchmarkMetric.custom("bytes per registered cache", useScalingFactor: false)
let bytesPerObserver = BenchmarkMetric.custom("bytes per observer", useScalingFactor: false)

let appCount = 1_000
let observerCount = 10_000

let benchmarks: @Sendable () -> Void = {
    func configuration(_ metric: BenchmarkMetric) -> Benchmark.Configuration {
        RunMode.current.configuration(timed: [], counted: [metric], maxIterations: 3)
    }

    // An app as the system holds it before launch: the actor, its run loop (its queue on the
    // system's run-loop pool), its lifecycle record and notification registry, and its delegate.
    Benchmark("Footprint-bytes-per-app", configuration: configuration(bytesPerApp)) { benchmark in
        let identifiers = try (0..<appCount).map { try AppIdentifier("app\($0)") }
        let threads = AppThreadGroup()
        let (apps, growth) = HeapUsage.measureGrowth {
            identifiers.map { App(identifier: $0, delegate: IdleDelegate(), threads: threads) }
        }
        withExtendedLifetime(apps) {}
        benchmark.measurement(bytesPerApp, growth.bytes / appCount)
    }

    // An empty cache and its entry in the system's purge registry, one per app.
    Benchmark("Footprint-bytes-per-registered-cache", configuration: configuration(bytesPerCache)) { benchmark in
        let identifiers = try (0..<appCount).map { try AppIdentifier("app\($0)") }
        let system = try MemorySystem(configuration: .init(budget: try MemoryBudget(totalBytes: 1 << 30)))
        let (caches, growth) = try HeapUsage.measureGrowth {
            try identifiers.map { owner in
                let cache = try PurgeableCache<Int, Int>(name: "images", owner: owner, category: .images)
                system.register(cache)
                return cache
            }
        }
        withExtendedLifetime(caches) {}
        benchmark.measurement(bytesPerCache, growth.bytes / appCount)
    }

    // Observers that capture nothing, so their closures allocate nothing: the bytes are the
    // registry's own.
    Benchmark("Footprint-bytes-per-observer", configuration: configuration(bytesPerObserver)) { benchmark in
        let app = App(identifier: try AppIdentifier("observed"), delegate: IdleDelegate(), threads: AppThreadGroup())
        let (tokens, growth) = HeapUsage.measureGrowth {
            (0..<observerCount).map { _ in
                app.notificationCenter.addObserver(forName: .didReceiveMemoryWarning) { _, _ in }
            }
        }
        withExtendedLifetime(tokens) {}
        benchmark.measurement(bytesPerObserver, growth.bytes / observerCount)
    }
}
