import Benchmark
import BenchmarkSupport
@_spi(Benchmarks) import MemoryPressure
import MemoryPressureTestKit

/// Registering and launching `count` tenants, a full sample among them, their resident bytes, and
/// what is left once they are terminated.
struct TenantFigures {
    var launchPerApp = 0
    var fullSample = 0
    var residentPerApp = 0
    var residentLeftPerApp = 0
    var terminated = 0

    static func measure(_ count: Int) async throws -> TenantFigures {
        var figures = TenantFigures()
        let before = try settledResidentBytes()
        let system = try MemorySystem(configuration: .benchmark(targetBytes: 8 << 30))
        let failure = SharedBox<String?>(nil)
        let clock = ContinuousClock()
        let start = clock.now
        for index in 0..<count {
            // Unowned: the system holds the app, which holds this closure.
            let heap: @Sendable (AppIdentifier) throws -> AppHeap = { [unowned system] app in try system.heap(for: app) }
            let app = try system.register(try Tenants.identifier(index)) { [heap] in
                TenantDelegate(heap: heap, onFailure: { failure.value = $0 })
            }
            try await app.launch()
        }
        figures.launchPerApp = (clock.now - start).wholeNanoseconds / count
        if let failure = failure.value { throw BenchmarkFailure(failure) }

        let sampler = MemorySampler(sources: PressureMonitor.Configuration.standardSources, logger: system.configuration.logger)
        _ = sampler.sample(.full)  // sources whose files are missing are retired on the first sample
        let samples = 20
        figures.fullSample = nanoseconds {
            for _ in 0..<samples { blackHole(sampler.sample(.full)) }
        } / samples
        figures.residentPerApp = try residentGrowth(since: before) / count

        figures.terminated = await system.shutDown().count
        figures.residentLeftPerApp = try residentGrowth(since: before) / count
        withExtendedLifetime(system) {}
        return figures
    }
}

/// One memory warning to `count` active apps, and the process's threads meanwhile.
struct WarningFigures {
    var nanoseconds = 0
    var peakThreads = 0
    var reached = 0

    static func measure(_ count: Int) async throws -> WarningFigures {
        let system = try MemorySystem(configuration: .benchmark(targetBytes: 8 << 30))
        var apps: [App] = []
        apps.reserveCapacity(count)
        for index in 0..<count {
            let app = try system.register(try Tenants.identifier(index)) { IdleDelegate() }
            try await app.launch()
            apps.append(app)
        }
        var figures = WarningFigures()
        let peak = PeakThreadCount()
        let clock = ContinuousClock()
        let start = clock.now
        let delivery = await MemoryWarning(level: .warning).deliver(to: apps, timeout: .seconds(60)) { _ in 0 }
        figures.nanoseconds = (clock.now - start).wholeNanoseconds
        figures.peakThreads = await peak.stop()
        figures.reached = delivery.appsReached
        guard delivery.appsReached == count else {
            throw BenchmarkFailure("the warning reached \(delivery.appsReached) apps of \(count)")
        }
        await system.shutDown()
        return figures
    }
}

/// The ladder terminating `count` suspended apps of 1 MiB each, one at a time: the time per
/// termination over the run, and its first, middle and last tenths.
struct LadderFigures {
    var perTermination = 0
    var middleToFirst = 0
    var lastToFirst = 0
    var terminated = 0

    static func measure(_ count: Int) async throws -> LadderFigures {
        // A target far under the process's footprint: the ladder terminates every suspended app.
        let system = try MemorySystem(configuration: .benchmark(targetBytes: 16 * mebibyte))
        let failure = SharedBox<String?>(nil)
        var apps: [App] = []
        apps.reserveCapacity(count)
        for index in 0..<count {
            let heap: @Sendable (AppIdentifier) throws -> AppHeap = { [unowned system] app in try system.heap(for: app) }
            let app = try system.register(try Tenants.identifier(index)) {
                BallastDelegate(bytes: mebibyte, heap: heap, onFailure: { failure.value = $0 })
            }
            guard try await app.launch() == .active else {
                throw BenchmarkFailure("\(app.identifier) did not launch: \(app.state), \(app.terminationReason.map(\.description) ?? "")")
            }
            try await app.enterBackground()
            apps.append(app)
        }
        if let failure = failure.value { throw BenchmarkFailure(failure) }
        guard apps.allSatisfy({ $0.state == .suspended }) else { throw BenchmarkFailure("not every app suspended") }

        let running = Task { try await system.run() }
        let deadline = ContinuousClock.now + .seconds(300)
        while system.terminations.count < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        running.cancel()
        _ = await running.result
        let times = system.terminations.map(\.time)
        guard times.count == count else { throw BenchmarkFailure("the ladder terminated \(times.count) apps of \(count)") }

        let intervals = zip(times.dropFirst(), times).map { ($0 - $1).wholeNanoseconds }
        let tenth = max(1, intervals.count / 10)
        func mean(_ slice: ArraySlice<Int>) -> Int { slice.reduce(0, +) / max(1, slice.count) }
        let first = max(1, mean(intervals.prefix(tenth)))
        let middle = mean(intervals[(intervals.count - tenth) / 2..<(intervals.count + tenth) / 2])
        return LadderFigures(
            perTermination: mean(intervals[...]),
            middleToFirst: middle * 100 / first,
            lastToFirst: mean(intervals.suffix(tenth)) * 100 / first,
            terminated: times.count
        )
    }
}
