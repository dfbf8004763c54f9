#if canImport(Glibc)
import Glibc
#endif
import BenchmarkSupport
import Dispatch
import Synchronization

/// Runs a benchmark's crossing on a thread of its own (not one of the Swift cooperative pool's),
/// optionally while CPU-bound tasks keep every cooperative thread busy.
///
/// The benchmark tool holds one of the pool's threads for as long as an async benchmark runs (its
/// runner, an async command, waits on a semaphore for the benchmark's task), so with one thread
/// per core fewer spinning tasks than cores find a thread; the rest wait in the pool's queue. So
/// that every core spins too, as in a service whose own work fills the pool, one spinning Dispatch
/// thread stands in for each pool thread that runs no spinning task.
enum OffPool {
    /// The number of online CPUs: the cooperative pool's width.
    static let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))

    /// What the spinning tasks, the stand-in threads and the probe share.
    private final class Spinners: Sendable {
        let spinning = Atomic<Bool>(true)
        let started = Atomic<Int>(0)
        let probeRan = Atomic<Bool>(false)

        func spin() {
            started.add(1, ordering: .relaxed)
            var turns = 0
            while spinning.load(ordering: .relaxed) { turns &+= 1 }
            _ = turns
        }
    }

    /// Runs `work` on a Dispatch thread and returns what it returns.
    ///
    /// With `saturatingPool`, first starts twice as many spinning tasks as there are cores and
    /// waits until the pool's free threads run them (and a stand-in thread spins for each pool
    /// thread left), then enqueues a probe task; stops them all once `work` has returned. The run
    /// fails unless the pool stayed saturated throughout: no further spinning task started, and the
    /// probe never ran.
    static func run<Result: Sendable>(
        saturatingPool: Bool, _ work: @escaping @Sendable () throws -> Result
    ) async throws -> Result {
        let spinners = Spinners()
        if saturatingPool {
            for _ in 0..<(2 * cores) {
                Task.detached { spinners.spin() }
            }
        }
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "benchmark.crossing").async {
                defer { spinners.spinning.store(false, ordering: .relaxed) }
                do {
                    var onPool = 0
                    if saturatingPool {
                        let deadline = ContinuousClock.now + .seconds(5)
                        while spinners.started.load(ordering: .relaxed) == 0 {
                            guard ContinuousClock.now < deadline else {
                                throw BenchmarkFailure("no spinning task started on the pool within 5 s")
                            }
                            usleep(1000)
                        }
                        usleep(20_000)
                        onPool = spinners.started.load(ordering: .relaxed)
                        for _ in onPool..<max(onPool, cores) {
                            DispatchQueue(label: "benchmark.stand-in-spinner").async { spinners.spin() }
                        }
                        Task.detached { spinners.probeRan.store(true, ordering: .relaxed) }
                        usleep(10_000)
                    }
                    let result = try work()
                    if saturatingPool {
                        let started = spinners.started.load(ordering: .relaxed)
                        guard started == max(onPool, cores), !spinners.probeRan.load(ordering: .relaxed) else {
                            throw BenchmarkFailure(
                                "the pool was not saturated: \(started) spinners started (\(onPool) on the pool), probe ran: \(spinners.probeRan.load(ordering: .relaxed))"
                            )
                        }
                    }
                    continuation.resume(returning: result)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
