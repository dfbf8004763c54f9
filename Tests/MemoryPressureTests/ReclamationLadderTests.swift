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

/// The reclamation ladder against the real allocator and the process's real footprint.
@Suite(.serialized, .exclusiveMemoryUse)
struct ReclamationLadderTests {
    let journal = TestAppJournal()

    /// Registers an app of `mebibytes` of ballast.
    func register(
        _ name: String, mebibytes: Int, in system: MemorySystem,
        configuration: AppConfiguration = .patient(), limits: AppMemoryLimits = .none
    ) throws -> App {
        let registry = system.registry
        let journal = journal
        return try system.register(.test(name), configuration: configuration, limits: limits) {
            ballastDelegate(mebibytes, registry: registry, journal: journal)
        }
    }

    @Test func suspendedAppsAreTerminatedLargestFirstUntilUnderTargetAndRelaunchRestored() async throws {
        // Five suspended apps of 40 to 200 MiB and an active one of 100 MiB: 700 MiB above the
        // baseline. A target 280 MiB below that needs the 200 and 160 MiB apps gone, not more.
        let baseline = try settledResidentBytes()
        let archive = try TemporaryDirectory()
        let system = try MemorySystem(configuration: .test(targetBytes: baseline + 420 * mebibyte, archiveIn: archive))
        let suspended = try [40, 80, 120, 160, 200].map { try register("suspended-\($0)", mebibytes: $0, in: system) }
        for app in suspended {
            try await app.launch()
            try await app.enterBackground()
        }
        let active = try register("active", mebibytes: 100, in: system)
        try await active.launch()
        #expect(suspended.allSatisfy { $0.state == .suspended })

        let events = system.events.stream()
        let run = try await system.running {
            await events.first(within: .seconds(30)) { $0.runUnderTarget != nil }?.runUnderTarget
        }

        let terminations = system.terminations
        #expect(terminations.map(\.app) == [.test("suspended-200"), .test("suspended-160")])
        #expect(terminations.allSatisfy { $0.reason == .systemPressure && $0.state == .suspended })
        #expect(terminations.allSatisfy { $0.step == .terminateSuspended })
        #expect(terminations.map(\.footprintBytes) == [200 * mebibyte, 160 * mebibyte])
        #expect(terminations.map(\.returnedBytes) == [200 * mebibyte, 160 * mebibyte])
        #expect(active.state == .active)
        #expect(suspended.filter { $0.state == .suspended }.count == 3)
        let ladderRun = try #require(run)
        #expect(ladderRun.level == .critical)
        #expect(try #require(ladderRun.footprintAfterBytes) <= system.targetBytes)
        #expect(ladderRun.steps.first { $0.step == .terminateSuspended }?.terminated == terminations.map(\.app))
        #expect(system.purgeLatency.count >= 1)

        for name in ["suspended-200", "suspended-160"] {
            let app = try #require(system.app(.test(name)))
            try await app.launch()
            let restored = journal.restoredStates(of: .test(name), as: SavedProgress.self)
            #expect(restored == [nil, SavedProgress(app: name, page: Int(name.dropFirst(10))!)])
        }
        withExtendedLifetime(archive) {}
    }

    @Test func whenNoSuspendedAppIsLeftBackgroundAppsGetWillTerminateLargestFirst() async throws {
        let baseline = try settledResidentBytes()
        let archive = try TemporaryDirectory()
        let system = try MemorySystem(configuration: .test(targetBytes: baseline + 150 * mebibyte, archiveIn: archive))
        let lifecycle = system.lifecycleEvents.stream()
        let longTasks = AppConfiguration.patient(backgroundTime: .seconds(600))
        let background = try [60, 120, 180].map {
            try register("background-\($0)", mebibytes: $0, in: system, configuration: longTasks)
        }
        for app in background {
            try await app.launch()
            _ = try app.beginBackgroundTask { _ in }
            try await app.enterBackground()
        }
        let active = try register("foreground", mebibytes: 40, in: system)
        try await active.launch()
        #expect(background.allSatisfy { $0.state == .background })

        let events = system.events.stream()
        _ = try await system.running {
            await events.first(within: .seconds(30)) { $0.runUnderTarget != nil }
        }

        let terminations = system.terminations
        #expect(terminations.map(\.app) == [.test("background-180"), .test("background-120")])
        #expect(terminations.allSatisfy { $0.state == .background && $0.step == .terminateBackground })
        #expect(terminations.allSatisfy { $0.reason == .systemPressure })
        #expect(active.state == .active)
        #expect(background[0].state == .background)
        // Bounded: a test that finds fewer fails instead of waiting for ever.
        let willTerminate = await withDeadline(generousDeadline) {
            await lifecycle
                .compactMap { event -> AppIdentifier? in
                    if case .callback(let app, .willTerminate) = event { return app }
                    return nil
                }
                .prefix(2)
                .reduce(into: []) { $0.append($1) }
        }
        #expect(willTerminate == [.test("background-180"), .test("background-120")])
        withExtendedLifetime(archive) {}
    }

    @Test func theActiveAppIsHeldToItsHardLimitAsItAllocatesAndWarnedAtItsSoftLimit() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 8 << 30))
        let limits = AppMemoryLimits(foreground: try .init(softBytes: 32 * mebibyte, hardBytes: 64 * mebibyte))
        let modest = try register("modest", mebibytes: 48, in: system, limits: limits)
        let registry = system.registry
        let greedyDelegate = GreedyDelegate(registry: registry, bytes: 96 * mebibyte)
        let greedy = try system.register(.test("greedy"), limits: limits) { greedyDelegate }
        let lifecycle = system.lifecycleEvents.stream()
        let events = system.events.stream()
        try await modest.launch()
        try await greedy.launch()

        // Both apps are over their soft limit (the greedy one held at its hard limit): each is warned once.
        let warned = try await system.running {
            await events.compactMap { event -> AppIdentifier? in
                if case .warning(let delivery, .softLimit) = event { delivery.order.first } else { nil }
            }.prefix(2).reduce(into: Set<AppIdentifier>()) { $0.insert($1) }
        }

        // The greedy app never held a byte past its limit: it was refused, not terminated after.
        #expect(greedyDelegate.heldBytes == 64 * mebibyte)
        #expect(greedyDelegate.refusal?.code == .allocationRefused)
        #expect(greedyDelegate.refusal?.app == greedy.identifier)
        #expect(system.footprint(of: greedy.identifier).heapBytes == 64 * mebibyte)
        #expect(system.refusedAllocations[greedy.identifier] == 1)
        #expect(greedy.state == .active)
        #expect(system.terminations.isEmpty)
        #expect(warned == [modest.identifier, greedy.identifier])
        let callbacks = await lifecycle.compactMap { event -> String? in
            if case .callback(let app, .didReceiveMemoryWarning) = event { "\(app) warning" } else { nil }
        }.prefix(2).reduce(into: Set<String>()) { $0.insert($1) }
        #expect(callbacks == ["modest warning", "greedy warning"])
    }

    @Test func anAppWhoseDeclaredCostsPassItsHardLimitIsTerminated() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 8 << 30))
        let limits = AppMemoryLimits(foreground: try .init(hardBytes: 64 * mebibyte))
        let app = try system.register(.test("declaring"), limits: limits) { IdleDelegate() }
        try await app.launch()
        let cache = try PurgeableCache<Int, [UInt8]>(name: "parsed", owner: app.identifier, category: .rebuildableObjects)
        system.register(cache)
        for key in 0..<96 { try cache.setValue([], forKey: key, cost: mebibyte) }
        let events = system.events.stream()

        let termination = try await system.running {
            await events.first(within: .seconds(30)) { if case .termination = $0 { true } else { false } }
        }

        guard case .termination(let record) = termination else {
            Issue.record("no termination")
            return
        }
        #expect(record.app == app.identifier)
        #expect(record.reason == .perAppLimit)
        #expect(record.step == .hardLimit)
        #expect(record.state == .active)
        #expect(record.footprintBytes == 96 * mebibyte)
        #expect(app.state == .notRunning)
    }

    @Test func aGibibyteOfCachesOverTenAppsIsGivenBackAndItsPurgeLatencyReported() async throws {
        let baseline = try settledResidentBytes()
        let system = try MemorySystem(configuration: .test(
            targetBytes: baseline + 512 * mebibyte, thresholds: .standard
        ))
        let keptInBackground = CacheCategory.custom(name: "kept in background", onEnteringBackground: .keep, onWarning: .empty)
        var caches: [PurgeableCache<Int, HeapBuffer>] = []
        for index in 0..<10 {
            let app = try system.register(.test("cached-\(index)"), configuration: .patient()) { IdleDelegate() }
            try await app.launch()
            let cache = try PurgeableCache<Int, HeapBuffer>(
                name: "tiles", owner: app.identifier, category: keptInBackground, payloadLocation: .appHeap
            )
            system.register(cache)
            let heap = try system.registry.heap(for: app.identifier)
            for (key, buffer) in try residentBuffers(in: heap, totalBytes: 103 * mebibyte).enumerated() {
                try cache.setValue(buffer, forKey: key, cost: buffer.byteCount)
            }
            caches.append(cache)
            try await app.enterBackground()
        }
        let cachedBytes = caches.reduce(0) { $0 + $1.totalCost }
        #expect(cachedBytes >= 1 << 30)

        let events = system.events.stream()
        let run = try await system.running {
            await events.first(within: .seconds(30)) { $0.runUnderTarget != nil }?.runUnderTarget
        }

        let ladderRun = try #require(run)
        let latency = try #require(ladderRun.latency)
        #expect(caches.allSatisfy { $0.count == 0 })
        #expect(try #require(ladderRun.footprintAfterBytes) <= system.targetBytes)
        #expect(system.terminations.isEmpty)
        let purged = ladderRun.steps.filter { $0.step == .purge }.reduce(0) { $0 + $1.releasedBytes }
        #expect(purged == cachedBytes)

        let kernel = try KernelReclaim.timeToReclaim(bytes: cachedBytes)
        print("""
            purge latency for \(cachedBytes >> 20) MiB of caches over 10 apps: \(latency) \
            (steps: \(ladderRun.steps.map { "\($0.step) \($0.duration)" }.joined(separator: ", "))); \
            kernel madvise(MADV_DONTNEED) of the same bytes: \(kernel); \
            ratio \(Double(latency / kernel))
            """)
    }
}
