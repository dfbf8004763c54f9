import MemoryPressure
import MemoryPressureTestKit
import Testing

/// The cache against a reference model, over seeded random operation sequences.
struct CachePropertyTests {
    /// The reference: entries from least to most recently used, in a plain array.
    struct Model {
        var entries: [(key: Int, cost: Int, accessed: Bool)] = []
        let costLimit: Int
        let countLimit: Int
        var evicted: [Int] = []

        var totalCost: Int { entries.reduce(0) { $0 + $1.cost } }

        mutating func get(_ key: Int) -> Bool {
            guard let index = entries.firstIndex(where: { $0.key == key }) else { return false }
            entries.append(entries.remove(at: index))
            return true
        }

        mutating func set(_ key: Int, cost: Int, accessed: Bool) {
            entries.removeAll { $0.key == key }
            entries.append((key, cost, accessed))
            while entries.count > countLimit || totalCost > costLimit {
                evicted.append(entries.removeFirst().key)
            }
        }

        mutating func remove(_ key: Int) {
            entries.removeAll { $0.key == key }
        }

        /// Walks from the oldest while over either target, removing every entry not being accessed.
        mutating func trim(keepingCount keptCount: Int, cost keptCost: Int) {
            var index = 0
            while index < entries.count, entries.count > keptCount || totalCost > keptCost {
                if entries[index].accessed {
                    index += 1
                } else {
                    evicted.append(entries.remove(at: index).key)
                }
            }
        }

        mutating func trim(toFraction fraction: Double) {
            trim(keepingCount: Int(Double(entries.count) * fraction), cost: Int(Double(totalCost) * fraction))
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func cacheMatchesReferenceModel(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let costLimit = Int.random(in: 50...400, using: &random)
        let countLimit = Int.random(in: 5...40, using: &random)
        let log = SharedLog<Int>()
        let cache = try PurgeableCache<Int, TestContent>(
            name: "model", owner: .test("model"), category: .rebuildableObjects,
            costLimit: costLimit, countLimit: countLimit
        ) { key, _ in log.append(key) }
        var model = Model(costLimit: costLimit, countLimit: countLimit)
        var accessedContents: [TestContent] = []

        for step in 0..<2_000 {
            let key = Int.random(in: 0..<60, using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<40:
                let found = cache.value(forKey: key)
                #expect((found != nil) == model.get(key), "seed \(seed) step \(step): lookup of \(key)")
                #expect(found.map { $0.id == key } ?? true)
            case 40..<80:
                let cost = Int.random(in: 0...60, using: &random)
                let content = TestContent(id: key)
                let accessed = Int.random(in: 0..<10, using: &random) == 0
                if accessed {
                    #expect(content.beginContentAccess())
                    accessedContents.append(content)
                }
                try cache.setValue(content, forKey: key, cost: cost)
                model.set(key, cost: cost, accessed: accessed)
            case 80..<88:
                cache.removeValue(forKey: key)
                model.remove(key)
            case 88..<92:
                let target = Int.random(in: 0...costLimit, using: &random)
                cache.trim(toCost: target)
                model.trim(keepingCount: .max, cost: target)
            case 92..<96:
                let fraction = Double(Int.random(in: 0...10, using: &random)) / 10
                try cache.trim(toFraction: fraction)
                model.trim(toFraction: fraction)
            default:
                let event = PurgeEvent.allCases.randomElement(using: &random)!
                cache.purge(for: event)
                model.trim(toFraction: cache.category.action(for: event).retainedFraction)
            }

            #expect(cache.count <= countLimit && cache.totalCost <= costLimit, "seed \(seed) step \(step): limits")
            #expect(cache.keysInEvictionOrder == model.entries.map(\.key), "seed \(seed) step \(step): LRU order")
            #expect(cache.totalCost == model.totalCost)
            #expect(log.all == model.evicted, "seed \(seed) step \(step): evicted entries")
            if cache.keysInEvictionOrder != model.entries.map(\.key) { return }
        }
        #expect(accessedContents.allSatisfy { !$0.isContentDiscarded }, "accessed content was discarded")
    }

    /// Thousands of keys with no limits: the key table grows several times and removals shift
    /// probe runs back; every key must stay findable and the order must stay the model's.
    @Test(arguments: [11, 12, 13] as [UInt64])
    func manyKeysWithRemovalsStayFindableInOrder(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let cache = try PurgeableCache<Int, TestContent>(name: "large", owner: .test("large"), category: .rebuildableObjects)
        var model = Model(costLimit: .max, countLimit: .max)
        for step in 0..<6_000 {
            let key = Int.random(in: 0..<3_000, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                try cache.setValue(TestContent(id: key), forKey: key, cost: key)
                model.set(key, cost: key, accessed: false)
            case 5..<8:
                #expect((cache.removeValue(forKey: key) != nil) == model.entries.contains { $0.key == key }, "step \(step)")
                model.remove(key)
            default:
                #expect((cache.value(forKey: key) != nil) == model.get(key), "step \(step)")
            }
        }
        #expect(cache.keysInEvictionOrder == model.entries.map(\.key))
        #expect(cache.totalCost == model.totalCost)
        for key in 0..<3_000 {
            #expect((cache.value(forKey: key)?.id) == (model.entries.contains { $0.key == key } ? key : nil))
        }
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0 && cache.keysInEvictionOrder.isEmpty)
    }

    @Test func accessedDiscardableContentSurvivesEveryPurge() throws {
        let cache = try PurgeableCache<Int, TestContent>(name: "accessed", owner: .test("a"), category: .images)
        let contents = (0..<100).map(TestContent.init(id:))
        for content in contents {
            try cache.setValue(content, forKey: content.id, cost: 10)
        }
        let accessed = contents.filter { $0.id % 7 == 0 }
        for content in accessed { #expect(content.beginContentAccess()) }

        for event in PurgeEvent.allCases {
            cache.purge(for: event)
            try cache.trim(toFraction: 0)
            cache.trim(toCost: 0)
        }

        #expect(Set(cache.keysInEvictionOrder) == Set(accessed.map(\.id)))
        #expect(accessed.allSatisfy { !$0.isContentDiscarded })
        #expect(contents.filter { $0.id % 7 != 0 }.allSatisfy { $0.isContentDiscarded })

        // Once the accesses end, the next purge takes them too.
        for content in accessed { content.endContentAccess() }
        cache.purge(for: .warning)
        #expect(cache.count == 0)
        #expect(accessed.allSatisfy { $0.isContentDiscarded })
    }
}
