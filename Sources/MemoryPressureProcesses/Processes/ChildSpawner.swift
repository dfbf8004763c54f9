#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import SystemPackage
import MemoryPressureRuntime

/// The thread a system's children are started from, so that none outlives its host, whether the
/// host ends by `shutDown()`, by `exit`, by a crash or by `SIGKILL`.
///
/// - **The parent-death signal.** Each child asks the kernel for `SIGKILL` when its parent ends
///   (`PR_SET_PDEATHSIG`). The kernel sends it when the *thread* that made the child ends, not its
///   process: a child made on a run-loop worker would be killed as that worker retires. Made here,
///   on a thread that runs while children may, each child dies with its host, the whole process's
///   end included.
/// - **The guardian**, for children the signal cannot end: one frozen in the v1 freezer waits for
///   its thaw, `SIGKILL` pending, for ever. Beside the first child, outside every child cgroup and
///   in a process group of its own, the spawner starts a small shell (``ChildGuardian``) holding
///   the read end of a pipe whose write end only this process holds. When the host ends, however,
///   the pipe reads end-of-file, and the guardian thaws and kills what is left in this process's
///   child cgroups, and removes them.
///
/// The thread and the guardian start with the first child and stop with ``stop()`` (the system's
/// shutdown, once no child runs) or with the spawner.
package final class ChildSpawner: Sendable {
    private struct State {
        var jobs: [Job] = []
        /// Whether the thread runs (started by the first job, ended by a stop).
        var threadRuns = false
        var stopRequested = false
        var guardian: ChildGuardian?
        /// Whether the guardian's failure to start was logged.
        var guardianFailureLogged = false
    }

    /// What the thread shares with the spawner: the jobs, and what wakes it for them.
    private final class Queue: Sendable {
        let state = LibraryLock(State())
        let wake: WakePipe

        init() throws(Errno) {
            wake = try WakePipe()
        }
    }

    private let queue: Queue
    private let logger: Logger

    package init(logger: Logger) throws(Errno) {
        self.logger = logger
        queue = try Queue()
    }

    deinit {
        stop()
    }

    /// Runs `spawn` on the spawner's thread and returns its result once it has run: a child it
    /// starts with a parent-death signal dies when this spawner's thread ends. Starts the thread,
    /// and the guardian of this process's child cgroups under `parents`, when they do not run.
    package func run<Result>(guarding parents: [FilePath], _ spawn: () -> Result) -> Result {
        startGuardianIfNeeded(parents)
        return withoutActuallyEscaping(spawn) { spawn in
            // The caller waits below until the body has run, so what it captures outlives the run;
            // the thread lets go of it before it says so, as `withoutActuallyEscaping` checks.
            let body = UncheckedBox<(() -> Result)?>(spawn)
            let result = UncheckedBox<Result?>(nil)
            let job = Job {
                result.value = body.value?()
                body.value = nil
            }
            let startsThread = queue.state.withLock { state in
                state.jobs.append(job)
                state.stopRequested = false
                defer { state.threadRuns = true }
                return !state.threadRuns
            }
            if startsThread {
                startThread()
            } else {
                queue.wake.wake()
            }
            job.waitUntilRun()
            return result.value!
        }
    }

    /// Ends the thread once its jobs have run, and dismisses the guardian: the host ends in order,
    /// and the guardian exits without touching anything. A child still running that was made here
    /// gets its parent-death signal. A later ``run(guarding:_:)`` starts both again.
    package func stop() {
        let guardian = queue.state.withLock { state -> ChildGuardian? in
            state.stopRequested = true
            defer { state.guardian = nil }
            return state.guardian
        }
        queue.wake.wake()
        guardian?.dismiss()
    }

    private func startThread() {
        do {
            let thread = try PosixThread.start(named: "mp-child-spawn") { [queue] in Self.serve(queue) }
            pthread_detach(thread)
        } catch {
            // No thread: the jobs run on the callers' threads, without the guarantee.
            logger.error("children are started on their launching threads: the spawner's thread could not start (\(error)); a child may outlive its host")
            let jobs = queue.state.withLock { state in
                state.threadRuns = false
                defer { state.jobs.removeAll() }
                return state.jobs
            }
            for job in jobs { job.run() }
        }
    }

    /// The thread's loop: runs the jobs in order, waits for more, ends once a stop is asked for
    /// and none is left.
    private static func serve(_ queue: Queue) {
        while true {
            let (jobs, ends) = queue.state.withLock { state -> ([Job], Bool) in
                let jobs = state.jobs
                state.jobs.removeAll()
                let ends = jobs.isEmpty && state.stopRequested
                if ends { state.threadRuns = false }
                return (jobs, ends)
            }
            if ends { return }
            if jobs.isEmpty {
                queue.wake.wait(until: nil)
                continue
            }
            for job in jobs { job.run() }
        }
    }

    private func startGuardianIfNeeded(_ parents: [FilePath]) {
        guard !parents.isEmpty, queue.state.withLock({ $0.guardian == nil }) else { return }
        do {
            let guardian = try ChildGuardian(parents: parents, logger: logger)
            let unneeded = queue.state.withLock { state -> ChildGuardian? in
                guard state.guardian == nil else { return guardian }
                state.guardian = guardian
                return nil
            }
            // Another launch started one first.
            unneeded?.dismiss()
        } catch {
            let logs = queue.state.withLock { state in
                defer { state.guardianFailureLogged = true }
                return !state.guardianFailureLogged
            }
            if logs {
                logger.warning("no guardian for the children's cgroups (\(error)): a child frozen by the v1 freezer stays frozen if this process dies, until the next host sweeps it")
            }
        }
    }
}

/// One spawn for the thread, and the wait of the caller that handed it over.
private final class Job: @unchecked Sendable {
    // @unchecked: `finished` is read and written only with `condition`'s mutex held.
    private let body: @Sendable () -> Void
    private let condition = ThreadCondition()
    private var finished = false

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }

    /// Runs the body, then wakes the caller.
    func run() {
        body()
        condition.withLock {
            finished = true
            condition.signal()
        }
    }

    /// Returns once ``run()`` has run the body.
    func waitUntilRun() {
        condition.withLock {
            while !finished { _ = condition.wait(until: nil) }
        }
    }
}

/// A value handed to the spawner's thread while its owner waits for the thread to be done with it.
private final class UncheckedBox<Value>: @unchecked Sendable {
    // @unchecked: written by the spawner's thread, read by the caller only once the job has
    // signalled, under its condition's mutex, that it has run.
    var value: Value

    init(_ value: Value) {
        self.value = value
    }
}
