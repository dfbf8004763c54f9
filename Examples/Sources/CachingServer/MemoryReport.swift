import Hummingbird
import MemoryPressure

/// What `/memory` answers: the level by name, the budget and the ladder's target in bytes, the
/// latest sample as the library encodes it (`sample`, absent before the first), and the page cache:
/// its entries, their bytes and its cost limit.
struct MemoryReport: ResponseEncodable {
    struct Cache: Codable {
        var entries: Int
        var costBytes: Int
        var limitBytes: Int
    }

    var level: PressureLevel
    var budgetBytes: Int
    var targetBytes: Int
    var sample: MemorySample?
    var cache: Cache

    init(system: MemorySystem, cache: PageCache, cacheLimitBytes: Int) {
        level = system.monitor.level
        budgetBytes = system.configuration.budget.totalBytes
        targetBytes = system.targetBytes
        sample = system.monitor.latestSample
        self.cache = Cache(entries: cache.count, costBytes: cache.totalCost, limitBytes: cacheLimitBytes)
    }
}
