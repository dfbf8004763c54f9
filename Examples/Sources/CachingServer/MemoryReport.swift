import Hummingbird
import Jemalloc
import MemoryPressure

/// What `/memory` answers: the level, the budget, the latest sample and the page cache, in bytes.
struct MemoryReport: ResponseEncodable {
    struct Allocator: Codable {
        var allocated: Int
        var active: Int
        var resident: Int
        var mapped: Int
        var retained: Int
        var metadata: Int
    }

    struct Stall: Codable {
        var someAverage10: Double
        var fullAverage10: Double
    }

    struct Cache: Codable {
        var entries: Int
        var costBytes: Int
    }

    var level: String
    var budgetBytes: Int
    var targetBytes: Int
    var footprintBytes: Int?
    var residentBytes: Int?
    var cgroupCurrentBytes: Int?
    var jemalloc: Allocator?
    var pressureStall: Stall?
    var sampleAgeMilliseconds: Int?
    var samplingDurationNanoseconds: Int?
    var cache: Cache

    init(system: MemorySystem, cache: PageCache) {
        let sample = system.monitor.latestSample
        level = system.monitor.level.description
        budgetBytes = system.configuration.budget.totalBytes
        targetBytes = system.targetBytes
        footprintBytes = sample?.footprintBytes
        residentBytes = sample?.residentBytes
        cgroupCurrentBytes = sample?.cgroupCurrentBytes
        jemalloc = sample?.jemalloc.map {
            Allocator(
                allocated: $0.allocated, active: $0.active, resident: $0.resident, mapped: $0.mapped,
                retained: $0.retained, metadata: $0.metadata
            )
        }
        pressureStall = sample?.pressureStall.map {
            Stall(someAverage10: $0.some.average10, fullAverage10: $0.full.average10)
        }
        sampleAgeMilliseconds = sample.map { Self.milliseconds(ContinuousClock.now - $0.time) }
        samplingDurationNanoseconds = sample?.samplingDuration.map { Self.nanoseconds($0) }
        self.cache = Cache(entries: cache.count, costBytes: cache.totalCost)
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        nanoseconds(duration) / 1_000_000
    }

    private static func nanoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    }
}
