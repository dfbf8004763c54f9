@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// The system's policy, judged on a footprint the test controls: a fixed base plus the apps' own.
@Suite(.exclusiveMemoryUse)
struct MemorySystemTests {
    /// Reports `base` plus the footprints of the apps registered in `system`.
    struct HostedFootprintSource: MemorySampleSource {
        let base: Int
        let system: SharedBox<MemorySystem?>

        var name: String { "hosted footprint" }
        var depth: SampleDepth { .cheap }

        func read(into sample: inout MemorySample) throws {
            guard let system = system.value else { return }
            sample.residentBytes = base + system.apps.reduce(0) { $0 + system.footprint(of: $1.identifier).totalBytes }
        }
    }

    @Test func theActiveAndInactiveAppsAreNeverTerminatedForSystemPressure() async throws {
        // The base alone is over the budget: nothing the ladder does can reach the target.
        let journal = TestAppJournal()
        let box = SharedBox<MemorySystem?>(nil)
        var configuration = try MemorySystem.Configuration.test(targetBytes: 64 * mebibyte)
        configuration.monitor.sources = [HostedFootprintSource(base: 128 * mebibyte, system: box)]
        let system = try MemorySystem(configuration: configuration)
        box.value = system
        let longTasks = try AppConfiguration(backgroundTaskTimeLimit: .seconds(600))
        func register(_ name: String, _ mebibytes: Int) throws -> App {
            let registry = system.registry
            return try system.register(.test(name), configuration: longTasks) {
                ballastDelegate(mebibytes, registry: registry, journal: journal)
            }
        }
        for (name, size) in [("small", 10), ("large", 30), ("medium", 20)] {
            let app = try register(name, size)
            try await app.launch()
            try await app.enterBackground()
        }
        let working = try register("working", 5)
        try await working.launch()
        _ = try working.beginBackgroundTask { _ in }
        try await working.enterBackground()
        let interrupted = try register("interrupted", 40)
        try await interrupted.launch()
        try await interrupted.deactivate()
        let active = try register("active", 50)
        try await active.launch()

        let events = system.events.stream()
        _ = try await system.running {
            await events.first(within: .seconds(30)) { event in
                if case .ladderRun(let run) = event { run.steps.contains { $0.step == .terminateBackground } } else { false }
            }
        }

        #expect(system.terminations.map(\.app.rawValue) == ["large", "medium", "small", "working"])
        #expect(system.terminations.map(\.step) == [.terminateSuspended, .terminateSuspended, .terminateSuspended, .terminateBackground])
        #expect(active.state == .active)
        #expect(interrupted.state == .inactive)
        #expect(system.purgeLatency.count == 0)
        #expect(system.ladderRuns.allSatisfy { $0.latency == nil && $0.level == .critical })
    }

    @Test func appsAreRegisteredOnceUnderValidIdentifiers() throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 64 * mebibyte))
        _ = try system.register(.test("once")) { IdleDelegate() }
        let error = #expect(throws: MemoryPressureError.self) {
            try system.register(.test("once")) { IdleDelegate() }
        }
        #expect(error?.code == .duplicateApp)
        #expect(error?.app == .test("once"))
        #expect(error?.description == "an app named once is already registered; expected a unique identifier per app")
        #expect(system.apps.map(\.identifier) == [.test("once")])
    }

    @Test(arguments: [0.0, -0.5, 0.8, 0.95])
    func aTargetMustLieBelowTheWarningThreshold(ratio: Double) throws {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 64 * mebibyte)
        configuration.targetRatio = ratio
        let error = #expect(throws: MemoryPressureError.self) { try MemorySystem(configuration: configuration) }
        #expect(error?.code == .invalidConfiguration)
        #expect(
            error?.description
                == "reclamation target ratio \(ratio) is out of range; expected more than 0 and less than the warning threshold's 0.8"
        )
    }

    @Test func anUnusableArchiveDirectoryIsAClearError() throws {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 64 * mebibyte)
        configuration.stateArchiveDirectory = "/proc/self/statm/states"
        let error = #expect(throws: MemoryPressureError.self) { try MemorySystem(configuration: configuration) }
        #expect(error?.code == .stateArchiveUnusable)
        #expect(
            error?.description == "state archive at /proc/self/statm cannot be used: it is not a directory; "
                + "expected a writable directory (created with mode 0700 if missing)"
        )
    }

    @Test func perAppLimitsMustBePositiveWithTheSoftOneBelowTheHardOne() throws {
        let hard = #expect(throws: MemoryPressureError.self) {
            try AppMemoryLimits.Limit(hardBytes: 0)
        }
        #expect(hard?.code == .invalidConfiguration)
        #expect(hard?.description == "per-app hard limit of 0 bytes is not positive; expected 1 byte or more")
        let error = #expect(throws: MemoryPressureError.self) {
            try AppMemoryLimits.Limit(softBytes: 64, hardBytes: 64)
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.description == "per-app soft limit of 64 bytes is not below the hard limit of 64 bytes; expected soft < hard")
        #expect(AppMemoryLimits.none.limit(in: .notRunning) == nil)
        let foregroundOnly = AppMemoryLimits(foreground: try .init(hardBytes: 1))
        #expect(foregroundOnly.limit(in: .inactive)?.hardBytes == 1)
        #expect(foregroundOnly.limit(in: .suspended)?.hardBytes == nil)
    }

    @Test func purgeLatencyPercentilesUseNearestRank() {
        var statistics = PurgeLatencyStatistics()
        #expect(statistics.p50 == nil)
        for milliseconds in 1...100 {
            statistics.record(.milliseconds(milliseconds))
        }
        #expect(statistics.p50 == .milliseconds(50))
        #expect(statistics.p99 == .milliseconds(99))
        #expect(statistics.max == .milliseconds(100))
    }

    /// Percentiles come by selection, not a sort; they equal the sorted nearest rank, with
    /// repeated values and in any order.
    @Test func purgeLatencyPercentilesBySelectionEqualTheSortedNearestRank() {
        var random = SplitMix64(seed: 7)
        for count in [1, 2, 3, 10, 101, 1000] {
            var statistics = PurgeLatencyStatistics()
            var recorded: [Duration] = []
            for _ in 0..<count {
                let latency = Duration.microseconds(Int.random(in: 0..<50, using: &random))
                statistics.record(latency)
                recorded.append(latency)
            }
            let sorted = recorded.sorted()
            for fraction in [0, 0.01, 0.25, 0.5, 0.9, 0.99, 1] {
                let rank = min(max(Int((fraction * Double(count)).rounded(.up)) - 1, 0), count - 1)
                #expect(statistics.percentile(fraction) == sorted[rank], "\(count) values, fraction \(fraction)")
            }
        }
    }
}

/// A service with no apps: its own caches are purged when pressure rises.
@Suite(.exclusiveMemoryUse)
struct ServiceCacheTests {
    @Test func aServicesOwnCachesArePurgedAtTheWarningLevel() async throws {
        let source = ScriptedSampleSource(residentBytes: 0)
        var configuration = try MemorySystem.Configuration.test(targetBytes: 64 * mebibyte)
        configuration.monitor.sources = [source]
        let system = try MemorySystem(configuration: configuration)
        let cache = try PurgeableCache<String, [UInt8]>(name: "responses", owner: .test("service"), category: .rebuildableObjects)
        system.register(cache)
        for key in 0..<100 {
            try cache.setValue([UInt8](repeating: 1, count: 16), forKey: "\(key)", cost: 1 << 20)
        }
        let events = system.events.stream()
        let purge = try await system.running {
            source.set(residentBytes: configuration.budget.bytes(enteringAbove: .warning) + 1, stall: nil)
            return await events.first(within: .seconds(30)) { event in
                if case .purge(let report, .purge) = event { report.releasedBytes > 0 } else { false }
            }
        }
        guard case .purge(let report, _) = purge else {
            Issue.record("no purge")
            return
        }
        #expect(report.releasedBytes == 100 << 20)
        #expect(cache.count == 0)
    }
}
