import Dispatch

/// The executor reclamation runs on: a serial queue of its own, so that the ladder's decisions,
/// purges and terminations never wait for a thread of the Swift cooperative pool, which the
/// service's own work can keep busy.
///
/// It is a task executor: the tasks that reclaim prefer it, so every nonisolated async function
/// they call (an app's `terminate`, a wait for a run loop to drain) runs here too instead of hopping
/// to the pool. The queue is an ordinary serial Dispatch queue, whose thread is lent from the
/// overcommitting pool and so is there even when every cooperative thread is busy. The work posted
/// here is short and never blocks: a purge, a decision, a post to an app's run loop.
final class ReclamationExecutor: TaskExecutor, SerialExecutor {
    private let queue = DispatchQueue(label: "memory-pressure.reclamation")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async {
            job.runSynchronously(isolatedTo: self.asUnownedSerialExecutor(), taskExecutor: self.asUnownedTaskExecutor())
        }
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
