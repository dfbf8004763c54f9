import Logging
import MemoryPressure
import MemoryPressureTestKit
import Synchronization
import Testing

/// A third round of the public API misused, beyond `PublicAPIMisuseTests`,
/// `PublicAPIMisuseRound2Tests`, `MisuseTests` and `ProcessAppMisuseTests`: settings and costs at
/// the edges of `Int` and `Duration` that the library's own arithmetic must survive, a cache that
/// outlives its app, and a raw deallocation of nothing. Each ends in the documented behaviour; none
/// traps or leaves a figure that disagrees with what is held.
@Suite struct PublicAPIMisuseRound3Tests {
    static func system(_ adjust: (inout MemorySystem.Configuration) -> Void = { _ in }) throws -> MemorySystem {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
        configuration.logger = silentLogger
        configuration.monitor.logger = silentLogger
        adjust(&configuration)
        return try MemorySystem(configuration: configuration)
    }

    // MARK: The monitor's interval

    @Test(arguments: [Duration.seconds(Int64.max), .seconds(Int64.max / 1000 + 1)])
    func aSamplingIntervalTooLongToWaitInOnePollIsWaitedForNotATrap(interval: Duration) async throws {
        // Any interval above zero is accepted. With nothing else to wake the monitor (no limit
        // checks, no working-set reads), its wait for the next sample was the interval in
        // milliseconds, whose product overflowed on the monitor's thread right after the first
        // sample: the process trapped.
        let system = try Self.system { configuration in
            configuration.monitor.interval = interval
            configuration.monitor.limitCheckInterval = nil
            configuration.monitor.controlGroupWorkingSet = .never
        }
        try await system.running {
            #expect(await eventually { system.monitor.latestSample != nil })
            // A second sample, asked for: the thread computed its wait after the first sample (where
            // the product overflowed) and waited in it; it waits again after this one, or is about
            // to, when the run is cancelled.
            #expect(await system.monitor.hasSampledAtTheTimeNow())
        }
        // The cancellation woke the waiting thread and the run ended; the system runs again.
        try await system.running {
            #expect(await eventually { system.monitor.latestSample != nil })
        }
    }

    // MARK: A cache that outlives its app

    @Test func aCacheKeptPastItsAppsTerminationIsStillCountedAndPurgedAndTheRecordSaysItWasNotReturned() async throws {
        // The footprint is scripted, so that the test can raise the level.
        let source = ScriptedSampleSource(residentBytes: 1 << 20)
        let system = try Self.system { $0.monitor.sources = [source] }
        let app = try system.register(.test("kept-cache")) { IdleDelegate() }
        // The service keeps the cache (a tenant's responses, say), not the app's delegate.
        let cache = try PurgeableCache<Int, Int>(name: "kept", owner: app.identifier, category: .images)
        system.register(cache)
        try cache.setValue(1, forKey: 1, cost: 1000)
        #expect(system.footprint(of: app.identifier).declaredBytesOutsideHeap == 1000)
        try await system.running {
            #expect(await eventually { system.monitor.latestSample != nil })
            try await app.launch()
            try await app.terminate(reason: .explicit)
            #expect(await eventually { system.terminations.contains { $0.app == app.identifier } })
            // The termination forgot the cache: its record said its 1000 bytes came back, while the
            // cache still held them, and the app's footprint dropped them.
            let record = try #require(system.terminations.last { $0.app == app.identifier })
            #expect(record.footprintBytes == 1000)
            #expect(record.returnedBytes == 0, "the cache still holds its cost: \(record)")
            #expect(system.footprint(of: app.identifier).declaredBytesOutsideHeap == cache.totalCost)
            // Relaunched, the app's cache is counted, and purged when it enters the background
            // (images are emptied then): it was neither.
            try await app.launch()
            try cache.setValue(2, forKey: 2, cost: 1000)
            #expect(system.footprint(of: app.identifier).declaredBytesOutsideHeap == 2000)
            try await app.enterBackground()
            #expect(await eventually { cache.count == 0 })
            #expect(system.footprint(of: app.identifier).declaredBytesOutsideHeap == 0)
            // Terminated again, with the service still filling the cache, the app's cache is
            // purged under pressure (images are emptied on a warning), as a service's own caches
            // are: it was out of the ladder's reach. Last, so that no ladder run under way can
            // change what the checks above read.
            try await app.terminate(reason: .explicit)
            try cache.setValue(3, forKey: 3, cost: 1000)
            #expect(system.footprint(of: app.identifier).declaredBytesOutsideHeap == 1000)
            source.set(residentBytes: system.budget.totalBytes, stall: nil)
            #expect(await eventually { cache.count == 0 })
            source.set(residentBytes: 1 << 20, stall: nil)
        }
    }

    /// Memory of the caller's own whose owner is looked up in the system it is registered with
    /// (the tenant it serves, say), reading the system's footprints on the way.
    final class LookedUpPurgeable: Purgeable {
        let system: MemorySystem
        let lookups = SharedBox(0)

        init(system: MemorySystem) {
            self.system = system
        }

        var name: String { "looked up" }
        var owner: AppIdentifier {
            _ = system.footprint(of: .service)
            lookups.update { $0 += 1 }
            return .test("looked-up-owner")
        }
        var category: CacheCategory { .images }
        var payloadLocation: PayloadLocation { .elsewhere }
        var totalCost: Int { 10 }
        var count: Int { 1 }

        func purge(for event: PurgeEvent) -> CachePurgeResult {
            CachePurgeResult()
        }
    }

    @Test func aPurgeablesOwnerIsReadOutsideTheRegistrysLockSoItMayUseTheSystem() throws {
        let system = try Self.system()
        let purgeable = LookedUpPurgeable(system: system)
        // The owner was read under the registry's lock, which the footprint takes again: the
        // process trapped ("Recursive call to lock").
        system.register(purgeable)
        system.register(purgeable)
        #expect(purgeable.lookups.value >= 2)
        #expect(system.footprint(of: .test("looked-up-owner")).declaredBytesOutsideHeap == 10, "registered once, under the owner read")
    }

    // MARK: Costs that add up past Int.max

    @Test func aPurgeOfCachesWhoseCostsAddUpPastIntMaxReportsIntMax() async throws {
        let system = try Self.system()
        let app = try system.register(.test("huge-costs")) { IdleDelegate() }
        // Each cost is accepted and each cache's total is clamped to Int.max; the purge report's
        // sum of two trapped, on the reclamation thread or in any observer that read it.
        let caches = try (0..<2).map { index in
            let cache = try PurgeableCache<Int, Int>(name: "huge \(index)", owner: app.identifier, category: .images)
            try cache.setValue(index, forKey: index, cost: .max)
            system.register(cache)
            return cache
        }
        let reports = try await system.purgeReports(ofEnteringTheBackground: app)
        let report = try #require(reports.first { $0.entries.contains { $0.app == app.identifier } })
        #expect(report.entries.map(\.releasedBytes) == [.max, .max])
        #expect(report.releasedBytes == .max)
        #expect(report.description.contains("released"))
        #expect(caches.allSatisfy { $0.count == 0 })
    }

    // MARK: Raw heap bytes

    @Test func deallocatingAnEmptyBufferDoesNothing() throws {
        let system = try Self.system()
        let heap = try system.heap(for: .test("empty-deallocation"))
        let bytes = try heap.allocateBytes(byteCount: 64)
        #expect(heap.allocatedBytes == 64)
        // A placeholder that was never replaced, freed as Swift's own `deallocate()` frees it:
        // the heap trapped ("deallocate(_:) of bytes with no address").
        heap.deallocate(UnsafeMutableRawBufferPointer(start: nil, count: 0))
        #expect(heap.allocatedBytes == 64)
        heap.deallocate(bytes)
        #expect(heap.allocatedBytes == 0)
    }

    // MARK: A sample source's figures

    /// A source that reports `bytes` resident, whatever the process holds.
    struct FixedSource: MemorySampleSource {
        let bytes: Int
        var name: String { "fixed \(bytes)" }
        var depth: SampleDepth { .cheap }

        func read(into sample: inout MemorySample) throws {
            sample.residentBytes = bytes
        }
    }

    @Test(arguments: [Int.max, Int.min, -1, (1 << 56) + 1])
    func aSampleSourcesFigureOutsideAnyMachinesMemoryIsUnknownAndLoggedNotATrap(bytes: Int) async throws {
        let (logger, log) = recordingLogger()
        let system = try Self.system { configuration in
            configuration.monitor.sources = [FixedSource(bytes: bytes)]
            configuration.monitor.logger = logger
        }
        let heap = try system.heap(for: .test("figures"))
        try await system.running {
            #expect(await eventually { system.monitor.latestSample != nil })
            // Int.max resident bytes overflowed this allocation's admission (a trap on the
            // allocating thread); Int.min overflowed the next sample's sums once heap bytes were
            // resident; -1 made a negative footprint.
            let buffer = try heap.allocate(byteCount: 1 << 20)
            #expect(heap.allocatedBytes == 1 << 20)
            let sampled = system.monitor.latestSample?.time
            #expect(await eventually { system.monitor.latestSample?.time != sampled })
            withExtendedLifetime(buffer) {}
        }
        // The source's figure is unknown, as a failed source's are, and its failure logged once.
        let sample = try #require(system.monitor.latestSample)
        #expect(sample.residentBytes == nil)
        #expect(sample.footprintBytes == nil)
        let lines = log.messages(atLeast: .notice).filter { $0.contains("fixed \(bytes)") }
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.contains("residentBytes to \(bytes), out of range; expected 0 to 72057594037927936 bytes") == true, "\(lines)")
    }

    @Test func aDiscardCallbackMayUseItsOwnCount() {
        let count = ContentAccessCount()
        let seen = Mutex<(discarded: Bool, opened: Bool)?>(nil)
        // The callback ran under the count's lock: reading the count trapped ("Recursive call to
        // lock Mutex").
        let discarded = count.discardIfPossible {
            seen.withLock { $0 = (count.isDiscarded, count.begin()) }
        }
        #expect(discarded)
        #expect(seen.withLock { $0?.discarded } == true)
        #expect(seen.withLock { $0?.opened } == false)
        #expect(!count.discardIfPossible() && count.openAccesses == 0)
    }

    @Test(arguments: [0, -1, Int.min])
    func aFastSamplingGrowthRateOfZeroOrLessIsATypedError(rate: Int) async throws {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33, logger: silentLogger)
        // Accepted, it made the monitor sample at its fast interval always, the opposite of what a
        // rate of zero seems to ask.
        configuration.monitor.fastSamplingGrowthRate = rate
        let system = try MemorySystem(configuration: configuration)
        let error = await #expect(throws: MemoryPressureError.self) { try await system.run() }
        #expect(error?.code == .invalidConfiguration)
        #expect(
            error?.description
                == "pressure monitor fastSamplingGrowthRate \(rate) bytes per second is not positive; expected 1 or more (Int.max samples fast only above the warning threshold)"
        )
    }
}

