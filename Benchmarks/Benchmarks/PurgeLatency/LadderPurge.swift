import BenchmarkSupport
import MemoryPressure
import MemoryPressureTestKit

/// The reclamation ladder giving back cache payloads: `cachedBytes` of 1 MiB payloads in the caches
/// of `appCount` background apps, in each app's own heap, judged against the process's real
/// footprint (statm) with the target half-way through the cached bytes.
enum LadderPurge {
    /// Caches that outlive entering the background and are emptied at the first warning, so the
    /// ladder's purge step is what gives the bytes back.
    static let keptInBackground = CacheCategory.custom(
        name: "kept in background", onEnteringBackground: .keep, onWarning: .empty
    )

    /// Nanoseconds from the sample that crossed the warning threshold until the footprint was
    /// back under target (``LadderRun/latency``), for the first ladder run that got it there.
    static func nanosecondsToPurge(cachedBytes: Int, appCount: Int) async throws -> Int {
        let baseline = try settledResidentBytes()
        let system = try MemorySystem(configuration: .benchmark(targetBytes: baseline + cachedBytes / 2))
        var caches: [PurgeableCache<Int, HeapBuffer>] = []
        let payloadsPerApp = cachedBytes / mebibyte / appCount
        let remainder = cachedBytes / mebibyte % appCount
        for index in 0..<appCount {
            let app = try system.register(try AppIdentifier("cached-\(index)")) { IdleDelegate() }
            try await app.launch()
            let cache = try PurgeableCache<Int, HeapBuffer>(
                name: "tiles", owner: app.identifier, category: keptInBackground, payloadLocation: .appHeap
            )
            system.register(cache)
            let payloadBytes = (payloadsPerApp + (index < remainder ? 1 : 0)) * mebibyte
            for (key, buffer) in try residentBuffers(in: system.heap(for: app.identifier), totalBytes: payloadBytes).enumerated() {
                try cache.setValue(buffer, forKey: key, cost: buffer.byteCount)
            }
            caches.append(cache)
            try await app.enterBackground()
        }
        guard caches.reduce(0, { $0 + $1.totalCost }) == cachedBytes else {
            throw BenchmarkFailure("the caches hold \(caches.reduce(0) { $0 + $1.totalCost }) bytes, not \(cachedBytes)")
        }

        let events = system.events.stream()
        let run = try await system.running {
            await events.first(within: .seconds(30)) { $0.runUnderTarget != nil }?.runUnderTarget
        }
        guard let run, let latency = run.latency else {
            throw BenchmarkFailure("no ladder run got the footprint under its target within 30 s")
        }
        guard caches.allSatisfy({ $0.count == 0 }), system.terminations.isEmpty else {
            throw BenchmarkFailure("the ladder did not get there by emptying the caches alone: \(run)")
        }
        _ = await system.shutDown()
        return latency.wholeNanoseconds
    }
}
