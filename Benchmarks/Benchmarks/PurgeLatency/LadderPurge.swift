import BenchmarkSupport
import MemoryPressure
import MemoryPressureTestKit

/// The reclamation ladder giving back cache payloads at the default configuration: about
/// `cachedBytes` of payloads in the caches of `appCount` background apps, in each app's own heap,
/// judged against the process's real footprint (statm), with the warning threshold where the
/// cached bytes end, so that the allocation of the last payload is the one that crosses it.
enum LadderPurge {
    /// Caches that outlive entering the background and are emptied at the first warning, so the
    /// ladder's purge step is what gives the bytes back.
    static let keptInBackground = CacheCategory.custom(
        name: "kept in background", onEnteringBackground: .keep, onWarning: .empty
    )

    /// Bytes left out of the caches until the system runs, to bring the footprint up to the
    /// warning threshold whatever the process's own footprint did meanwhile.
    static let reserve = 32 * mebibyte

    /// What one purge measured.
    struct Outcome {
        /// Nanoseconds from the allocation that crossed the warning threshold until a measurement
        /// found the footprint back under target (``LadderRun/latency``).
        var latency: Int
        /// The payload bytes the ladder purged.
        var purgedBytes: Int
    }

    static func purge(cachedBytes: Int, appCount: Int) async throws -> Outcome {
        let baseline = try settledResidentBytes()
        let warningRatio = MemoryBudget.Thresholds.standard.ratios.warning
        let system = try MemorySystem(configuration: .defaults(budgetBytes: Int(Double(baseline + cachedBytes) / warningRatio)))
        let warningBytes = system.configuration.budget.bytes(enteringAbove: .warning)
        var caches: [PurgeableCache<Int, HeapBuffer>] = []
        var heaps: [AppHeap] = []
        let payloadsPerApp = (cachedBytes - reserve) / mebibyte / appCount
        let remainder = (cachedBytes - reserve) / mebibyte % appCount
        for index in 0..<appCount {
            let app = try system.register(try AppIdentifier("cached-\(index)")) { IdleDelegate() }
            try await app.launch()
            let cache = try PurgeableCache<Int, HeapBuffer>(
                name: "tiles", owner: app.identifier, category: keptInBackground, payloadLocation: .appHeap
            )
            system.register(cache)
            let heap = try system.heap(for: app.identifier)
            let payloadBytes = (payloadsPerApp + (index < remainder ? 1 : 0)) * mebibyte
            for (key, buffer) in try residentBuffers(in: heap, totalBytes: payloadBytes).enumerated() {
                try cache.setValue(buffer, forKey: key, cost: buffer.byteCount)
            }
            caches.append(cache)
            heaps.append(heap)
            try await app.enterBackground()
        }

        let events = system.events.stream()
        let outcome = try await system.running { () async throws -> Outcome in
            // Within 1 MiB under the warning threshold: filler payloads, each followed by a sample,
            // each filling half of the gap less half a MiB. The resident memory outside the heaps
            // grows a little with a filler (0.8 MiB after one of 28 MiB on this machine), so one
            // filler of the whole gap can overshoot the threshold.
            var key = 1 << 20
            var sample = try await system.monitor.sample(after: .now)
            for _ in 0..<16 {
                guard let footprint = sample.footprintBytes, footprint < warningBytes else {
                    throw BenchmarkFailure("the footprint reached the warning threshold before the crossing payload: \(sample)")
                }
                let gap = warningBytes - footprint
                if gap < mebibyte { break }
                let filler = try heaps[0].allocate(byteCount: max(pageSize, ((gap - mebibyte / 2) / 2) & ~(pageSize - 1)))
                try caches[0].setValue(filler, forKey: key, cost: filler.byteCount)
                key += 1
                sample = try await system.monitor.sample(after: .now)
            }
            guard let footprint = sample.footprintBytes, (1..<mebibyte).contains(warningBytes - footprint) else {
                throw BenchmarkFailure("could not bring the footprint within 1 MiB under the warning threshold: \(sample)")
            }
            let cachedAtCrossing = caches.reduce(0) { $0 + $1.totalCost } + mebibyte
            // The crossing: one more 1 MiB payload, in the last app's cache.
            let allocated = ContinuousClock.now
            let crossing = try heaps[appCount - 1].allocate(byteCount: mebibyte)
            let admitted = ContinuousClock.now
            try caches[appCount - 1].setValue(crossing, forKey: key, cost: crossing.byteCount)

            let run = await events.first(within: .seconds(30)) { $0.runUnderTarget != nil }?.runUnderTarget
            guard let run, let latency = run.latency else {
                throw BenchmarkFailure("no ladder run got the footprint under its target within 30 s")
            }
            guard run.crossingTime >= allocated, run.crossingTime <= admitted else {
                throw BenchmarkFailure("the run's crossing (\(run.crossingTime)) is not the allocation's (\(allocated) to \(admitted))")
            }
            // The crossing payload itself may have been put in its cache after the purge.
            let left = caches.reduce(0) { $0 + $1.totalCost }
            guard left <= mebibyte, system.terminations.isEmpty else {
                throw BenchmarkFailure("the ladder did not get there by emptying the caches alone: \(left) bytes left, \(run)")
            }
            return Outcome(latency: latency.wholeNanoseconds, purgedBytes: cachedAtCrossing - left)
        }
        for cache in caches { cache.removeAll() }
        _ = await system.shutDown()
        return outcome
    }
}
