import MemoryPressure
import MemoryPressureTestKit
import Synchronization
import Testing

struct CacheTests {
    static func cache(
        category: CacheCategory = .images,
        costLimit: Int? = nil,
        countLimit: Int? = nil,
        onEviction: PurgeableCache<Int, String>.EvictionHandler? = nil
    ) throws -> PurgeableCache<Int, String> {
        try PurgeableCache(
            name: "test", owner: .test("app"), category: category,
            costLimit: costLimit, countLimit: countLimit, onEviction: onEviction
        )
    }

    @Test func badLimitsCostsAndFractionsAreTypedErrors() throws {
        let cost = #expect(throws: MemoryPressureError.self) { try Self.cache(costLimit: 0) }
        #expect(cost?.code == .invalidConfiguration)
        #expect(cost?.description == "cache cost limit 0 is not positive; expected 1 or more, or no limit")
        let count = #expect(throws: MemoryPressureError.self) { try Self.cache(countLimit: -3) }
        #expect(count?.code == .invalidConfiguration)
        #expect(count?.description == "cache count limit -3 is not positive; expected 1 or more, or no limit")
        let tooLarge = #expect(throws: MemoryPressureError.self) { try Self.cache(countLimit: 1 << 24) }
        #expect(tooLarge?.code == .invalidConfiguration)
        #expect(tooLarge?.description == "cache count limit 16777216 is larger than a cache holds; expected 1 through 16777214, or no limit")
        #expect(try Self.cache(countLimit: 16_777_214).countLimit == 16_777_214)
        let cache = try Self.cache()
        let negative = #expect(throws: MemoryPressureError.self) { try cache.setValue("x", forKey: 1, cost: -1) }
        #expect(negative?.code == .invalidArgument)
        #expect(negative?.description == "cache entry cost -1 is negative; expected 0 or more")
        let above = #expect(throws: MemoryPressureError.self) { try cache.trim(toFraction: 1.5) }
        #expect(above?.code == .invalidArgument)
        #expect(above?.description == "fraction 1.5 is out of range; expected 0 through 1")
        let below = #expect(throws: MemoryPressureError.self) { try PurgeAction.trim(toFraction: -0.1) }
        #expect(below?.code == .invalidArgument)
        #expect(below?.description == "fraction -0.1 is out of range; expected 0 through 1")
        let notANumber = #expect(throws: MemoryPressureError.self) { try cache.trim(toFraction: .nan) }
        #expect(notANumber?.code == .invalidArgument)
        #expect(notANumber?.description == "fraction nan is out of range; expected 0 through 1")
    }

    @Test func insertBeyondLimitsEvictsLeastRecentlyUsed() throws {
        let log = SharedLog<Int>()
        let cache = try Self.cache(costLimit: 100, countLimit: 3) { key, _ in log.append(key) }
        for key in 1...3 { try cache.setValue("\(key)", forKey: key, cost: 10) }
        #expect(cache.value(forKey: 1) == "1")  // 2 is now the least recently used
        try cache.setValue("4", forKey: 4, cost: 10)
        #expect(log.all == [2])
        #expect(cache.keysInEvictionOrder == [3, 1, 4])

        try cache.setValue("big", forKey: 5, cost: 85)
        #expect(log.all == [2, 3, 1])
        #expect(cache.totalCost == 95)

        // An entry over the cost limit by itself does not stay.
        try cache.setValue("huge", forKey: 6, cost: 101)
        #expect(cache.count == 0)
        #expect(log.all == [2, 3, 1, 4, 5, 6])
    }

    @Test func replacingAndRemovingDoNotCallTheEvictionHandler() throws {
        let log = SharedLog<Int>()
        let cache = try Self.cache { key, _ in log.append(key) }
        try cache.setValue("a", forKey: 1, cost: 5)
        try cache.setValue("b", forKey: 1, cost: 7)
        #expect(cache.value(forKey: 1) == "b")
        #expect(cache.totalCost == 7)
        #expect(cache.removeValue(forKey: 1) == "b")
        try cache.setValue("c", forKey: 2)
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
        #expect(log.all.isEmpty)
    }

    @Test func evictionHandlerRunsOutsideTheLock() throws {
        let observed = Mutex<[Int]>([])
        let cacheBox = Mutex<PurgeableCache<Int, String>?>(nil)
        let cache = try Self.cache(countLimit: 1) { _, _ in
            // Re-entering the cache would deadlock if the handler ran under its lock.
            let count = cacheBox.withLock { $0 }?.count ?? -1
            observed.withLock { $0.append(count) }
        }
        cacheBox.withLock { $0 = cache }
        try cache.setValue("a", forKey: 1)
        try cache.setValue("b", forKey: 2)
        #expect(observed.withLock { $0 } == [1])
        // The handler holds the box that holds the cache: break the cycle, or the cache leaks.
        cacheBox.withLock { $0 = nil }
    }

    @Test func categoriesDecideWhatEachEventPurges() throws {
        let images = try Self.cache(category: .images)
        let rebuildable = try Self.cache(category: .rebuildableObjects)
        let keepOnBackground = try Self.cache(category: .custom(
            name: "sessions", onEnteringBackground: .keep, onWarning: try .trim(toFraction: 0.5)
        ))
        for cache in [images, rebuildable, keepOnBackground] {
            for key in 0..<100 { try cache.setValue("\(key)", forKey: key, cost: 1) }
        }

        #expect(images.purge(for: .enteringBackground) == CachePurgeResult(removedCount: 100, releasedCost: 100))
        #expect(rebuildable.purge(for: .enteringBackground).removedCount == 90)
        #expect(rebuildable.keysInEvictionOrder == Array(90..<100))
        #expect(keepOnBackground.purge(for: .enteringBackground).removedCount == 0)
        #expect(keepOnBackground.purge(for: .warning).removedCount == 50)
        #expect(keepOnBackground.purge(for: .critical).removedCount == 50)
        #expect(rebuildable.purge(for: .warning).removedCount == 10)
        #expect(PurgeEvent(.normal) == nil)
        #expect(PurgeEvent(.critical) == .critical)
    }

    @Test func limitsHoldUnderConcurrentUse() async throws {
        let cache = try Self.cache(costLimit: 500, countLimit: 64)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var random = SplitMix64(seed: UInt64(worker))
                    for _ in 0..<5_000 {
                        let key = Int.random(in: 0..<200, using: &random)
                        if Bool.random(using: &random) {
                            try? cache.setValue("\(key)", forKey: key, cost: Int.random(in: 0...20, using: &random))
                        } else if let value = cache.value(forKey: key) {
                            #expect(value == "\(key)")
                        }
                    }
                }
            }
        }
        #expect(cache.count <= 64)
        #expect(cache.totalCost <= 500)
        #expect(cache.keysInEvictionOrder.count == cache.count)
    }

    @Test func contentAccessCountNeverDiscardsWhileAccessed() {
        let content = TestContent(id: 1)
        #expect(content.beginContentAccess())
        #expect(content.beginContentAccess())
        content.discardContentIfPossible()
        content.endContentAccess()
        content.discardContentIfPossible()
        #expect(!content.isContentDiscarded)
        content.endContentAccess()
        content.discardContentIfPossible()
        #expect(content.isContentDiscarded)
        #expect(!content.beginContentAccess())
        #expect(content.openAccesses == 0)
    }
}
