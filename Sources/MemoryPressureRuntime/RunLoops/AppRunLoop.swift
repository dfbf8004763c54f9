import DequeModule
import Synchronization

/// An app's main run loop: a serial queue that runs the app's work one item at a time, in the order
/// posted, on a thread of its system's ``RunLoopPool``.
///
/// It is the `SerialExecutor` of the app's actor, so the actor's own jobs and the callbacks the
/// system posts with `perform` share one queue: nothing the app runs ever overlaps anything else it
/// runs. An idle app holds no thread; a busy one holds one worker for a turn at a time, and a
/// callback that blocks holds it until it returns, while the pool goes on with the other apps (see
/// ``RunLoopPool`` for how it grows past blocked workers, and its bound).
package final class AppRunLoop: SerialExecutor {
    private enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private struct Queue {
        var work: Deque<Work> = []
        /// Whether the run loop is on the pool's ready queue or on a worker: only then is it
        /// scheduled again, so that one worker at a time runs it.
        var isScheduled = false
    }

    private let queue = LibraryLock(Queue())
    /// The thread running a turn of this run loop, or zero: what `checkIsolated` compares with.
    private let runningThread = Atomic<UInt>(0)
    private let pool: RunLoopPool

    package init(pool: RunLoopPool) {
        self.pool = pool
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        post(.job(UnownedJob(job)))
    }

    /// Posts `work` behind everything already posted.
    package func perform(_ work: @escaping @Sendable () -> Void) {
        post(.closure(work))
    }

    private func post(_ work: Work) {
        let schedule = queue.withLock { queue in
            queue.work.append(work)
            defer { queue.isScheduled = true }
            return !queue.isScheduled
        }
        if schedule { pool.schedule(self) }
    }

    /// Runs up to `limit` items on the calling worker, in order. Returns true when work remains (the
    /// run loop stays scheduled, and the worker puts it back on the ready queue); false when the
    /// queue ran dry (the next post schedules it again).
    func runTurn(limit: Int) -> Bool {
        runningThread.store(PosixThread.current, ordering: .relaxed)
        for _ in 0..<limit {
            let next: Work? = queue.withLock { queue in
                if let work = queue.work.popFirst() { return work }
                // Unmarked before it may be scheduled again, on another worker.
                runningThread.store(0, ordering: .relaxed)
                queue.isScheduled = false
                // An idle run loop holds no storage: most apps are idle most of the time, and a
                // terminated one stays idle for as long as it stays registered.
                queue.work = []
                return nil
            }
            switch next {
            case .job(let job): callOut { job.runSynchronously(on: asUnownedSerialExecutor()) }
            case .closure(let work): callOut(work)
            case nil: return false
            }
        }
        runningThread.store(0, ordering: .relaxed)
        return true
    }

    /// Whether a turn of the run loop runs now: the app's own code, not a wait for a worker.
    package var isRunningATurn: Bool {
        runningThread.load(ordering: .relaxed) != 0
    }

    package func checkIsolated() {
        precondition(runningThread.load(ordering: .relaxed) == PosixThread.current, "not on the app's run loop")
    }
}
