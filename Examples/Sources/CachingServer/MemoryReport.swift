import Hummingbird
import MemoryPressure

/// What `/memory` answers: the level by name, the budget in force and the ladder's target in bytes
/// (both follow the cgroup's limit), the latest sample as the library encodes it (`sample`, absent
/// before the first), and the page cache: its entries, their bytes and its cost limit in force.
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

    init(system: MemorySystem, cache: PageCache) {
        level = system.monitor.level
        budgetBytes = system.budget.totalBytes
        targetBytes = system.targetBytes
        sample = system.monitor.latestSample
        self.cache = Cache(entries: cache.count, costBytes: cache.totalCost, limitBytes: cache.costLimitInForce ?? 0)
    }
}
