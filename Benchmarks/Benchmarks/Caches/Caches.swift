import Benchmark
import Foundation
import Jemalloc
import MemoryPressure

/// PurgeableCache against Foundation's NSCache, 200,000 entries per measured batch.
///
/// Keys and values are made before measuring and shared by both caches, every entry costs 1, and
/// there is no cost limit: NSCache's best case (its cost-sorted insert is O(1) only when costs are
/// equal).
let entryCount = 200_000
let evictionCountLimit = 20_000

final class Payload: Sendable {
    let id: Int
    init(id: Int) { self.id = id }
}

let payloads = (0..<entryCount).map(Payload.init(id:))
let numberKeys = (0..<entryCount).map { NSNumber(value: $0) }
let app = try! AppIdentifier("benchmark")

func purgeableCache(countLimit: Int? = nil) -> PurgeableCache<Int, Payload> {
    try! PurgeableCache(name: "benchmark", owner: app, category: .rebuildableObjects, countLimit: countLimit)
}

func nsCache(countLimit: Int = 0) -> NSCache<NSNumber, Payload> {
    let cache = NSCache<NSNumber, Payload>()
    cache.countLimit = countLimit
    return cache
}

func fill(_ cache: PurgeableCache<Int, Payload>) {
    for index in 0..<entryCount { try! cache.setValue(payloads[index], forKey: index, cost: 1) }
}

func fill(_ cache: NSCache<NSNumber, Payload>) {
    for index in 0..<entryCount { cache.setObject(payloads[index], forKey: numberKeys[index], cost: 1) }
}

/// Live bytes and live allocations, after flushing this thread's cache so freed bytes are not
/// counted as allocated. The malloc interposer adds 16 bytes to each allocation; the count lets the
/// caller take that out.
func heapUsage() -> (bytes: Int, allocations: Int) {
    try! Jemalloc.flushThreadCache()
    try! Jemalloc.advanceEpoch()
    func read(_ name: String) -> Int { Int(try! MallctlKey<UInt64>("stats.arenas.4096.\(name)").read()) }
    let allocations = read("small.nmalloc") - read("small.ndalloc") + read("large.nmalloc") - read("large.ndalloc")
    return (try! MallctlKey.statsAllocated.read(), allocations)
}

let interposerHeader = 16

/// Bytes per entry beyond the key and the value reference, and allocations per entry.
func overheadPerEntry(keyAndValueBytes: Int, _ fillCache: () -> AnyObject) -> (bytes: Int, allocations: Int) {
    let before = heapUsage()
    let cache = fillCache()
    let after = heapUsage()
    withExtendedLifetime(cache) {}
    let allocations = after.allocations - before.allocations
    let bytes = after.bytes - before.bytes - allocations * interposerHeader
    return (bytes / entryCount - keyAndValueBytes, allocations * 1000 / entryCount)
}

let bytesPerEntry = BenchmarkMetric.custom("overhead bytes per entry")
let allocationsPerThousandEntries = BenchmarkMetric.custom("allocations per 1000 entries")

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .throughput],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(10),
        maxIterations: 10
    )
    let nsCacheConfiguration = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .throughput],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(10),
        maxIterations: 4
    )
    let memoryConfiguration = Benchmark.Configuration(
        metrics: [bytesPerEntry, allocationsPerThousandEntries],
        warmupIterations: 0,
        maxIterations: 1
    )

    Benchmark("Cache insert 200k: PurgeableCache") { benchmark in
        let cache = purgeableCache()
        benchmark.startMeasurement()
        fill(cache)
        benchmark.stopMeasurement()
    }
    Benchmark("Cache insert 200k: NSCache", configuration: nsCacheConfiguration) { benchmark in
        let cache = nsCache()
        benchmark.startMeasurement()
        fill(cache)
        benchmark.stopMeasurement()
    }

    let filledPurgeable = purgeableCache()
    fill(filledPurgeable)
    Benchmark("Cache hit 200k: PurgeableCache") { _ in
        for index in 0..<entryCount { blackHole(filledPurgeable.value(forKey: index)) }
    }
    let filledNSCache = nsCache()
    fill(filledNSCache)
    Benchmark("Cache hit 200k: NSCache", configuration: nsCacheConfiguration) { _ in
        for index in 0..<entryCount { blackHole(filledNSCache.object(forKey: numberKeys[index])) }
    }

    Benchmark("Cache insert with eviction 200k (limit 20k): PurgeableCache") { benchmark in
        let cache = purgeableCache(countLimit: evictionCountLimit)
        benchmark.startMeasurement()
        fill(cache)
        benchmark.stopMeasurement()
    }
    Benchmark("Cache insert with eviction 200k (limit 20k): NSCache", configuration: nsCacheConfiguration) { benchmark in
        let cache = nsCache(countLimit: evictionCountLimit)
        benchmark.startMeasurement()
        fill(cache)
        benchmark.stopMeasurement()
    }

    Benchmark("Cache empty 200k: PurgeableCache") { benchmark in
        let cache = purgeableCache()
        fill(cache)
        benchmark.startMeasurement()
        cache.removeAll()
        benchmark.stopMeasurement()
    }
    Benchmark("Cache empty 200k: NSCache", configuration: nsCacheConfiguration) { benchmark in
        let cache = nsCache()
        fill(cache)
        benchmark.startMeasurement()
        cache.removeAllObjects()
        benchmark.stopMeasurement()
    }

    Benchmark("Cache memory per entry: PurgeableCache", configuration: memoryConfiguration) { benchmark in
        let overhead = overheadPerEntry(keyAndValueBytes: MemoryLayout<Int>.size + MemoryLayout<Payload>.size) {
            let cache = purgeableCache()
            fill(cache)
            return cache
        }
        benchmark.measurement(bytesPerEntry, overhead.bytes)
        benchmark.measurement(allocationsPerThousandEntries, overhead.allocations)
    }
    Benchmark("Cache memory per entry: NSCache", configuration: memoryConfiguration) { benchmark in
        let overhead = overheadPerEntry(keyAndValueBytes: MemoryLayout<NSNumber>.size + MemoryLayout<Payload>.size) {
            let cache = nsCache()
            fill(cache)
            return cache
        }
        benchmark.measurement(bytesPerEntry, overhead.bytes)
        benchmark.measurement(allocationsPerThousandEntries, overhead.allocations)
    }
}
