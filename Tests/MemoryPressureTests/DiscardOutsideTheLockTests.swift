import MemoryPressure
import MemoryPressureTestKit
import Testing

/// A purge asks discardable content to discard itself outside the cache's lock, so the content's
/// own code may use its cache (before, a read of the cache from `discardContentIfPossible()` was a
/// recursive lock: a crash).
struct DiscardOutsideTheLockTests {
    /// Content that, when asked to discard, reads and writes the cache it is in.
    final class CacheUsingContent: DiscardableContent {
        let id: Int
        let access = ContentAccessCount()
        let cache: SharedBox<PurgeableCache<Int, CacheUsingContent>?> = SharedBox(nil)
        let countsSeen = SharedLog<Int>()

        func beginContentAccess() -> Bool { access.begin() }
        func endContentAccess() { access.end() }
        func discardContentIfPossible() {
            guard let cache = cache.value else { return }
            countsSeen.append(cache.count)
            _ = cache.value(forKey: 100)
            try? cache.setValue(CacheUsingContent(id: 200 + id), forKey: 200 + id, cost: 0)
            access.discardIfPossible()
        }
        var isContentDiscarded: Bool { access.isDiscarded }

        init(id: Int) {
            self.id = id
        }
    }

    @Test func discardCallbacksMayUseTheirCacheAndContentInUseIsKept() throws {
        let evicted = SharedLog<Int>()
        let cache = try PurgeableCache<Int, CacheUsingContent>(
            name: "reentrant", category: .rebuildableObjects, onEviction: { key, _ in evicted.append(key) }
        )
        let contents = (0..<4).map { CacheUsingContent(id: $0) }
        for (key, content) in contents.enumerated() {
            content.cache.value = cache
            try cache.setValue(content, forKey: key, cost: 10)
        }
        // One in use: kept, and the trim goes on past it.
        #expect(contents[1].beginContentAccess())

        let result = try cache.trim(toFraction: 0)
        #expect(result.removedCount == 3)
        #expect(result.releasedCost == 30)
        #expect(evicted.all == [0, 2, 3])
        #expect(cache.value(forKey: 1) === contents[1])
        for (index, content) in contents.enumerated() {
            #expect(content.isContentDiscarded == (index != 1))
            #expect(content.countsSeen.all.count == 1, "asked once: \(index)")
        }
        // What the callbacks stored while the purge ran is there: the purge's targets were taken
        // before they stored it.
        #expect(cache.count == 1 + 4)
        #expect(cache.value(forKey: 203)?.id == 203)
        contents[1].endContentAccess()
    }
}
