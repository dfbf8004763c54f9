import Dispatch
import Foundation
import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import Testing

/// Issue 42: discardable content is discarded at every purge that reaches it, on entering the
/// background and at the warning level, and the purge's report, published once the discards are
/// done, counts them. Written against the public API only, as a UIKit developer would try it.
///
/// Alone among the memory suites (`.exclusiveMemoryUse`): each purge of payloads outside the heaps
/// returns every arena's pages, over a thousand times here, and `ParallelPurgeTests` counts an
/// arena's dirty pages between its own frees and purge.
@Suite(.serialized, .exclusiveMemoryUse) struct DiscardEveryTimeTests {
    /// A value that conforms through the library's own ``ContentAccessCount``.
    final class Discardable: DiscardableContent {
        let access = ContentAccessCount()
        func beginContentAccess() -> Bool { access.begin() }
        func endContentAccess() { access.end() }
        func discardContentIfPossible() { access.discardIfPossible {} }
        var isContentDiscarded: Bool { access.isDiscarded }
    }

    struct Payload: Sendable {
        let bytes: [UInt8]
    }

    /// What one launch of the app made.
    struct Made: Sendable {
        let discardable: PurgeableCache<Int, Discardable>
        let values: [Discardable]
        let plain: [String: PurgeableCache<Int, Payload>]
        let store: BackingStore
    }

    /// The index of the value whose access stays open.
    static let inUse = 3
    static let keeps = CacheCategory.custom(name: "kept", onEnteringBackground: .keep, onWarning: .keep, onCritical: .keep)

    /// In `app`'s `didFinishLaunching`: four caches of 100 payloads each (images, media,
    /// rebuildable objects and a custom category that keeps its entries on entering the
    /// background), a discardable cache of 10 values, the fourth in use, and a backing store.
    static func makeCaches(in app: isolated App, system: MemorySystem) throws -> Made {
        var plain: [String: PurgeableCache<Int, Payload>] = [:]
        for (name, category) in [("images", CacheCategory.images), ("media", .media), ("rebuildable", .rebuildableObjects), ("kept", keeps)] {
            let cache = try PurgeableCache<Int, Payload>(name: name, owner: app.identifier, category: category)
            for key in 0..<100 { try cache.setValue(Payload(bytes: [UInt8](repeating: 1, count: 64)), forKey: key, cost: 64) }
            system.register(cache)
            plain[name] = cache
        }
        let discardable = try PurgeableCache<Int, Discardable>(name: "discardable", owner: app.identifier, category: .images)
        let values = (0..<10).map { _ in Discardable() }
        for (key, value) in values.enumerated() { try discardable.setValue(value, forKey: key, cost: 100) }
        #expect(values[inUse].beginContentAccess())
        system.register(discardable)
        let store = try BackingStore(width: 64, height: 64, in: try system.heap(for: app.identifier)) { pixels in
            pixels.initializeMemory(as: UInt8.self, repeating: 0)
        }
        _ = try store.withPixels { $0.count }
        system.register(store, owner: app.identifier)
        return Made(discardable: discardable, values: values, plain: plain, store: store)
    }

    /// The report's entry for the discardable cache of `app`.
    static func discardableEntry(of app: AppIdentifier, in report: PurgeReport) -> PurgeReport.Entry? {
        report.entries.first { $0.app == app && $0.source == .cache(name: "discardable", category: .images) }
    }

    /// Checks that every value not in use was discarded and removed, the one in use kept and not
    /// discarded, and that the report counts what was discarded.
    static func expectDiscardedButTheOneInUse(_ made: Made, report: PurgeReport, app: AppIdentifier, round: Int) {
        for (key, value) in made.values.enumerated() {
            let kept = key == inUse
            #expect(value.isContentDiscarded == !kept, "round \(round): value \(key)")
            #expect((made.discardable.value(forKey: key) != nil) == kept, "round \(round): value \(key)")
        }
        #expect(made.discardable.count == 1, "round \(round)")
        let discarded = made.values.filter(\.isContentDiscarded).count
        #expect(discardableEntry(of: app, in: report)?.removedCount == discarded, "round \(round)")
    }

    /// The purge reports `system` publishes, as they come.
    static func purgeReports(of system: MemorySystem) -> (SharedLog<(PurgeReport, ReclamationStep)>, ObservationToken) {
        let reports = SharedLog<(PurgeReport, ReclamationStep)>()
        let token = system.events.observe { event in
            if case .purge(let report, let step) = event { reports.append((report, step)) }
        }
        return (reports, token)
    }

    /// The first report of `step` after the first `skipping` that has an entry `matching`, waited
    /// for up to 5 s.
    static func report(
        in reports: SharedLog<(PurgeReport, ReclamationStep)>, after skipping: Int, step: ReclamationStep,
        matching: @escaping (PurgeReport.Entry) -> Bool
    ) async -> (report: PurgeReport, seen: Int)? {
        var found: (PurgeReport, Int)?
        _ = await eventually(within: .seconds(5)) {
            let all = reports.all
            guard let index = all.indices.dropFirst(skipping).first(where: { all[$0].1 == step && all[$0].0.entries.contains(where: matching) }) else {
                return false
            }
            found = (all[index].0, index + 1)
            return true
        }
        return found
    }

    /// An app registered in `system` whose every launch makes the caches of ``makeCaches(in:system:)``
    /// in `didFinishLaunching`, and the box that holds what the last launch made.
    static func appMakingCaches(
        _ name: String, in system: MemorySystem, configuration: AppConfiguration = .patient(),
        configure: @escaping @Sendable (StateReadingDelegate) -> Void = { _ in }
    ) throws -> (App, SharedBox<Made?>) {
        let made = SharedBox<Made?>(nil)
        let app = try system.register(.test(name), configuration: configuration) {
            let delegate = StateReadingDelegate()
            delegate.hooks[.didFinishLaunching] = { app in made.value = try? Self.makeCaches(in: app, system: system) }
            configure(delegate)
            return delegate
        }
        return (app, made)
    }

    static func quietSystem(source: ScriptedSampleSource? = nil) throws -> MemorySystem {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 70 << 20, thresholds: .tight, logger: silentLogger)
        if let source { configuration.monitor.sources = [source] }
        return try MemorySystem(configuration: configuration)
    }

    @Test func everyEntryIntoTheBackgroundDiscardsWhatIsNotInUse() async throws {
        try await Self.enterTheBackground(rounds: 1000) { caches, purge, app, round in
            Self.expectDiscardedButTheOneInUse(caches, report: purge, app: app, round: round)
            #expect(caches.plain["images"]?.count == 0)
            #expect(caches.plain["media"]?.count == 0)
            #expect(caches.plain["rebuildable"]?.count == 10)
            #expect(caches.plain["kept"]?.count == 100)
            #expect(caches.store.byteCount == 0)
            #expect(purge.entries.contains { $0.app == app && $0.source == .store })
        }
    }

    /// `rounds` times, in a running system: the app launches (making its caches), enters the
    /// background (`around` that entry, which it runs, once it has made the caches), and `check`
    /// is given what was made, the purge's report for the app (waited for up to 5 s), the app and
    /// the round; then the access in use ends and the app is terminated.
    static func enterTheBackground(
        rounds: Int,
        around: (Made, () async throws -> Void) async throws -> Void = { _, enter in try await enter() },
        check: (Made, PurgeReport, AppIdentifier, Int) -> Void
    ) async throws {
        let system = try quietSystem(source: ScriptedSampleSource(residentBytes: 10 << 20))
        let (app, made) = try appMakingCaches("photos", in: system)
        let (reports, token) = purgeReports(of: system)
        defer { token.cancel() }
        var seen = 0
        try await system.running {
            // The system purges apps entering the background once it runs: its first sample says so.
            #expect(await eventually { system.monitor.latestSample != nil })
            for round in 0..<rounds {
                try await app.launch()
                let caches = try #require(made.value, "round \(round)")
                try await around(caches) { () async throws -> Void in
                    let entered = try await app.enterBackground()
                    #expect(entered == .suspended, "round \(round)")
                }
                let found = await report(in: reports, after: seen, step: .enteringBackground) { $0.app == app.identifier }
                let (purge, next) = try #require(found, "round \(round)")
                seen = next
                check(caches, purge, app.identifier, round)
                caches.values[inUse].endContentAccess()
                try await app.terminate(reason: .explicit)
                made.value = nil
            }
        }
    }

    /// Content in use is passed over, and discarded at the next purge after its access ends.
    @Test func contentInUseIsDiscardedAtTheNextPurgeAfterItsAccessEnds() async throws {
        let system = try Self.quietSystem(source: ScriptedSampleSource(residentBytes: 10 << 20))
        let (app, made) = try Self.appMakingCaches("photos", in: system)
        try await system.running {
            try await app.launch()
            let caches = try #require(made.value)
            #expect(try await app.enterBackground() == .suspended)
            let inUse = caches.values[Self.inUse]
            #expect(!inUse.isContentDiscarded)
            inUse.endContentAccess()
            #expect(try await app.enterForeground() == .active)
            #expect(try await app.enterBackground() == .suspended)
            #expect(inUse.isContentDiscarded)
            #expect(caches.discardable.count == 0)
        }
        await system.shutDown()
    }

    /// A warning-level purge of an app that runs in the background (a background task holds it
    /// there) discards what is not in use, every time.
    @Test func aWarningPurgeOfABackgroundAppDiscardsWhatIsNotInUse() async throws {
        let source = ScriptedSampleSource(residentBytes: 10 << 20)
        let system = try Self.quietSystem(source: source)
        let budget = system.budget.totalBytes
        // A task opened on entering the background keeps it running there.
        let (app, made) = try Self.appMakingCaches("music", in: system, configuration: try AppConfiguration(backgroundTaskTimeLimit: .seconds(600))) { delegate in
            delegate.hooks[.didEnterBackground] = { app in _ = try? app.beginBackgroundTask { _ in } }
        }
        let (reports, token) = Self.purgeReports(of: system)
        defer { token.cancel() }
        var seen = 0
        try await system.running {
            try await app.launch()
            #expect(try await app.enterBackground() == .background)
            let owner = app.identifier
            for round in 0..<20 {
                // Fresh content in the background app's cache, the fourth in use again.
                let caches = try #require(made.value)
                let values = (0..<10).map { _ in Discardable() }
                for (key, value) in values.enumerated() { try caches.discardable.setValue(value, forKey: key, cost: 100) }
                #expect(values[Self.inUse].beginContentAccess())
                let fresh = Made(discardable: caches.discardable, values: values, plain: caches.plain, store: caches.store)
                source.set(residentBytes: Int(Double(budget) * 0.82), stall: nil)
                let found = await Self.report(in: reports, after: seen, step: .purge) {
                    $0.app == owner && $0.source == .cache(name: "discardable", category: .images)
                }
                let (purge, next) = try #require(found, "round \(round)")
                seen = next
                #expect(purge.event == .warning)
                #expect(app.state == .background)
                Self.expectDiscardedButTheOneInUse(fresh, report: purge, app: owner, round: round)
                // Back to normal before the access ends, so that no later purge of this episode
                // discards the value in use and is taken for the next round's.
                source.set(residentBytes: 10 << 20, stall: nil)
                #expect(await eventually { system.monitor.level == .normal })
                values[Self.inUse].endContentAccess()
            }
        }
        await system.shutDown()
    }

    /// The purge races accesses begun and ended on other threads: every value is then either
    /// discarded and removed or kept and not discarded, the one held in use is kept, and the
    /// report counts what was discarded; nothing crashes (the suite runs under ThreadSanitizer in
    /// CI too).
    @Test func aPurgeRacingAccessesKeepsTheRules() async throws {
        try await Self.enterTheBackground(rounds: 200) { caches, enter in
            let racing = Atomic<Bool>(true)
            // Threads of their own: spinning on the cooperative pool (Dispatch's global queue, two
            // threads here) would starve the test's own task.
            let finished = DispatchSemaphore(value: 0)
            for key in [0, 5, 9] {
                let value = caches.values[key]
                Thread {
                    while racing.load(ordering: .relaxed) {
                        if value.beginContentAccess() { value.endContentAccess() }
                    }
                    finished.signal()
                }.start()
            }
            try await enter()
            racing.store(false, ordering: .relaxed)
            for _ in 0..<3 { finished.wait() }
        } check: { caches, purge, app, round in
            for (key, value) in caches.values.enumerated() {
                #expect(value.isContentDiscarded == (caches.discardable.value(forKey: key) == nil), "round \(round): value \(key)")
            }
            #expect(!caches.values[Self.inUse].isContentDiscarded)
            #expect(caches.values.enumerated().allSatisfy { key, value in [0, 5, 9, Self.inUse].contains(key) || value.isContentDiscarded })
            let discarded = caches.values.filter(\.isContentDiscarded).count
            #expect(Self.discardableEntry(of: app, in: purge)?.removedCount == discarded, "round \(round)")
        }
    }
}
