#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DequeModule
import Synchronization
import MemoryPressureRuntime

/// The executor reclamation runs on: a thread of its own for each ``MemorySystem/run()``, so that
/// the ladder's decisions, purges and terminations never wait for a thread of the Swift cooperative
/// pool, which the service's own work can keep busy.
///
/// It is a task executor: the tasks that reclaim prefer it, so every nonisolated async function
/// they call (an app's `terminate`, a wait for a run loop to drain) runs here too instead of hopping
/// to the pool. The work posted here is short and never blocks: a purge, a decision, a post to an
/// app's run loop. Jobs run one at a time, in the order they were enqueued.
final class ReclamationExecutor: TaskExecutor, SerialExecutor {
    private struct Jobs {
        var queue: Deque<UnownedJob> = []
        var isStopping = false
    }

    private let jobs = LibraryLock(Jobs())
    /// Signalled once per job enqueued, and once to stop.
    private let ready = ThreadSemaphore()
    /// The thread's `pthread_t`, for ``checkIsolated()``; 0 until the thread runs.
    private let thread = Atomic<UInt>(0)
    private let finished = Completion<Void>()

    /// Starts the executor's thread.
    init() throws(MemoryPressureError) {
        do {
            let thread = try PosixThread.start(named: "reclamation") { [self] in run() }
            pthread_detach(thread)
        } catch {
            throw .reclamationThreadFailed(error)
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.queue.append(job) }
        ready.signal()
    }

    func checkIsolated() {
        precondition(pthread_self() == thread.load(ordering: .acquiring), "not on the reclamation thread")
    }

    /// Ends the thread once the jobs already enqueued have run, and returns when it has. Called when
    /// every task that prefers the executor has finished, so no job comes after.
    func stop() async {
        jobs.withLock { $0.isStopping = true }
        ready.signal()
        await finished.value
    }

    private func run() {
        thread.store(pthread_self(), ordering: .releasing)
        RoomSignal.neverWaitOnThisThread()
        while true {
            _ = ready.wait()
            let (job, isDone) = jobs.withLock { jobs in
                let job = jobs.queue.popFirst()
                return (job, job == nil && jobs.isStopping)
            }
            if let job {
                callOut { job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor()) }
            } else if isDone {
                finished.resolve(())
                return
            }
        }
    }
}
