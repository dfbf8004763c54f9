import Dispatch

/// An app's main run loop: a serial queue that runs the app's work one item at a time, in the order
/// posted, on a Dispatch worker thread.
///
/// It is the `SerialExecutor` of the app's actor, so the actor's own jobs and the callbacks the
/// system posts with `perform` share one queue: nothing the app runs ever overlaps anything else it
/// runs, and apps never wait for one another (each has its own queue; Dispatch lends threads as
/// needed and takes them back when the queue is idle, so an idle app holds no thread).
final class AppRunLoop: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    /// Posts `work` behind everything already posted.
    func perform(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
