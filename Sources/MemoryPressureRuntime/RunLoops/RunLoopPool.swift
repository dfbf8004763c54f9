#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DequeModule
import Synchronization

/// The threads every app's run loop runs on: a bounded pool, shared by the apps of a memory system
/// (its ``AppThreadGroup``), whose workers stop with the group.
///
/// ## Why a pool of our own
/// A serial `DispatchQueue` per app costs a thread whenever it has work: Dispatch's overcommitting
/// pool lends each busy queue a thread of its own, so a memory warning to a thousand apps grew the
/// process to 259 threads. The run loops cannot go to the Swift cooperative pool or to Dispatch's
/// non-overcommitting global queues either: a service that saturates those (it may, and the
/// reclamation must still reach its apps) would stall every app, and a callback that blocks would
/// take a cooperative thread away from the service.
///
/// ## How it works
/// Each ``AppRunLoop`` keeps its own queue of work and is *scheduled* here (put on the ready queue)
/// when work arrives and it is not already scheduled or running. A worker takes the oldest ready
/// run loop, runs a turn of it (at most ``turnLength`` items, in order), and puts it back at the
/// end of the ready queue if work remains: one run loop is on at most one worker at a time, so each
/// app's work stays serial and in posted order, and a busy app cannot starve the others.
///
/// ## How many threads
/// - ``baseWorkers`` (the processor count, at least 2) workers are started as work arrives and
///   stay. Work is CPU-bound and short (callbacks, warnings), so more would only contend.
/// - A callback that blocks holds its worker. A watchdog, a look every ``lookInterval`` on the
///   group's deadline timers' thread (``DeadlineTimers``) while run loops wait and no worker is
///   idle, and no thread of its own: a worker whose turn began more than
///   ``stallThreshold`` ago and whose thread sleeps (is blocked in a wait, as `/proc` reports it)
///   is *stalled*, and while fewer than ``baseWorkers`` workers make progress it adds one, up to
///   ``maximumWorkers`` in all. So a blocked app delays the others by a
///   few milliseconds (well within the 25 ms an expiration handler may get before its app's end),
///   not until its callback returns (its deadline terminates the app, but Swift cannot pre-empt
///   the callback). A turn that is only slow, or whose thread waits for a processor on a busy
///   machine, adds no worker: more threads would not make it faster. Added workers leave after
///   ``retireAfter`` without work.
/// - Past ``maximumWorkers`` blocked callbacks at once (each a bug of its app), the other apps wait
///   until one returns: the pool is bounded by design, where Dispatch's would grow to hundreds.
///
/// The process then has `baseWorkers` threads for a system's apps whatever their number (and the
/// deadline timers' one, which every app shares anyway), plus one per callback blocked at the time.
///
/// ## Stopping
/// ``stop()`` lets the workers finish the run loops that are ready and end, waits for them, and
/// joins their threads; a worker blocked in an app's callback cannot end, and is left to end once
/// the callback returns. Work posted afterwards starts workers again.
package final class RunLoopPool: Sendable {
    /// The workers kept by default: one per processor, at least 2.
    package static var standardBaseWorkers: Int { max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// The workers kept: enough to keep every processor busy.
    let baseWorkers: Int
    /// The most workers there may be, blocked ones included.
    let maximumWorkers: Int
    /// How long a turn runs before its worker counts as stalled (blocked, most likely).
    let stallThreshold: Duration = .milliseconds(5)
    /// How often the watchdog looks for stalled workers while run loops wait.
    let lookInterval: Duration = .milliseconds(2)
    /// How long a worker beyond ``baseWorkers`` waits for work before it ends.
    let retireAfter: Duration
    /// The most items of one run loop a worker runs before it lets the next run loop have a turn.
    let turnLength = 32

    private struct Worker {
        /// Its thread, to join once it has ended; nil until its start returns.
        var thread: pthread_t?
        /// Its thread's kernel identifier, once the thread runs.
        var task: pid_t?
        /// When the turn it runs began, on the timers' clock; nil while it waits for work.
        var turnStart: ContinuousClock.Instant?
    }

    private struct State {
        var ready: Deque<AppRunLoop> = []
        var workers: [Int: Worker] = [:]
        var nextWorker = 0
        /// Workers waiting for a ready run loop (some of them already signalled for one).
        var idle = 0
        /// Whether the watchdog is looking: a look is scheduled on the deadline timers.
        var isWatching = false
        /// The ``stop()`` calls under way: while any is, idle workers end once no run loop is ready.
        var stopsUnderWay = 0
        /// The threads of workers that ended for a ``stop()``, for it to join.
        var ended: [pthread_t] = []
        /// The thread of the last worker that retired on its own, for the next one to retire, the
        /// next ``stop()`` or the pool's end to join: no worker's thread is left detached, so none
        /// outlives a stop.
        var retired: pthread_t?

        /// Whether some ready run loop has no idle worker to take it.
        var isShortOfWorkers: Bool { ready.count > idle }

        /// The kernel identifiers of the workers in a turn that began more than `threshold` before
        /// `now`: those to look at (in `/proc`, outside the lock) for whether they are stalled.
        func longTurns(threshold: Duration, now: ContinuousClock.Instant) -> [pid_t] {
            workers.values.compactMap { worker in
                guard let start = worker.turnStart, now - start > threshold else { return nil }
                return worker.task
            }
        }

        /// Forgets the worker `identifier`, which ends. Its thread is joined by the ``stop()`` under
        /// way, or by its start if it ends before its start has noted it. A worker retiring on its
        /// own becomes ``retired``; returns the one it replaces there, for it to join as it ends.
        mutating func end(_ identifier: Int) -> pthread_t? {
            guard let thread = workers.removeValue(forKey: identifier)?.thread else { return nil }
            guard stopsUnderWay == 0 else {
                ended.append(thread)
                return nil
            }
            defer { retired = thread }
            return retired
        }

        /// Notes a new worker, whose thread the caller starts once the lock is released.
        mutating func reserveWorker() -> Int {
            let identifier = nextWorker
            nextWorker += 1
            workers[identifier] = Worker()
            return identifier
        }
    }

    private let state = LibraryLock(State())
    /// Signalled once for each run loop put on the ready queue (and once per worker to stop).
    private let readyCount = ThreadSemaphore()
    /// Signalled by each worker that ends.
    private let workerEnded = ThreadSemaphore()
    /// Where the watchdog's looks are scheduled: the timers of the pool's group.
    private let timers: DeadlineTimers

    /// A pool of `baseWorkers` workers, growing past blocked ones to `maximumWorkers` (by default
    /// four times as many, at least 64), whose added workers end after `retireAfter` without work;
    /// its watchdog looks on `timers`.
    package init(baseWorkers: Int = standardBaseWorkers, maximumWorkers: Int? = nil, retireAfter: Duration = .seconds(2), timers: DeadlineTimers) {
        self.baseWorkers = baseWorkers
        self.maximumWorkers = maximumWorkers ?? max(64, baseWorkers * 4)
        self.retireAfter = retireAfter
        self.timers = timers
    }

    /// Joins the thread of the worker that retired last, which nobody else will: the pool's workers
    /// hold it while they run, so it goes only once the last of them has returned. Released on that
    /// very thread (its closure's reference was the last), it detaches it instead.
    deinit {
        guard let retired = state.withLock({ $0.retired }) else { return }
        if pthread_equal(retired, pthread_self()) == 0 {
            pthread_join(retired, nil)
        } else {
            pthread_detach(retired)
        }
    }

    /// How many workers there are now.
    var workerCount: Int { state.withLock { $0.workers.count } }

    /// Runs `work` once on a worker, in a run loop of its own: for the system's deliveries that
    /// must wait neither behind an app's run loop, which its callback may block, nor on the
    /// thread that decided them (the deadline timers'). A `work` that blocks holds its worker as a
    /// blocked callback does, and the pool grows past it.
    package func run(_ work: @escaping @Sendable () -> Void) {
        AppRunLoop(pool: self).perform(work)
    }

    /// Puts `runLoop`, which has work and is on no worker nor the ready queue, on the ready queue.
    package func schedule(_ runLoop: AppRunLoop) {
        let (newWorker, startsWatching) = state.withLock { state in
            state.ready.append(runLoop)
            let newWorker = state.isShortOfWorkers && state.workers.count < baseWorkers ? state.reserveWorker() : nil
            return (newWorker, beginsWatching(&state))
        }
        readyCount.signal()
        if let newWorker { startWorker(newWorker) }
        if startsWatching { scheduleLook() }
    }

    /// Whether the watchdog must start looking: run loops wait with no worker to take them and it
    /// is not looking already.
    private func beginsWatching(_ state: inout State) -> Bool {
        guard state.isShortOfWorkers, state.workers.count >= baseWorkers, !state.isWatching else { return false }
        state.isWatching = true
        return true
    }

    /// Starts the thread of the worker reserved as `identifier`, with the pool's lock released;
    /// forgets the worker when no thread can be started.
    private func startWorker(_ identifier: Int) {
        if let thread = try? PosixThread.start(named: "app-runloop", { self.work(as: identifier) }) {
            let ended = state.withLock { state in
                guard state.workers[identifier] != nil else { return true }
                state.workers[identifier]?.thread = thread
                return false
            }
            // Ended already (a stop as it started): nobody else will join it.
            if ended { pthread_join(thread, nil) }
            return
        }
        let left = state.withLock { state in
            state.workers[identifier] = nil
            return state.workers.count
        }
        precondition(left > 0, "no thread could be started for the apps' run loops")
    }

    /// A worker's life: take a ready run loop, run a turn of it, and again; a worker beyond the
    /// base ends after ``retireAfter`` without work.
    private func work(as identifier: Int) {
        let task = PosixThread.currentTaskIdentifier
        state.withLock { $0.workers[identifier]?.task = task }
        while true {
            state.withLock { $0.idle += 1 }
            let waited = readyCount.wait(atMost: retireAfter)
            // `ending`: nil while the worker goes on; as it ends, the retired worker it joins.
            // On the timers' clock, which the watchdog reads too; read before the lock, as a manual
            // clock's time is behind a lock of its own.
            let turnStart = timers.clock.now
            let (runLoop, startsWatching, ending): (AppRunLoop?, Bool, Ending?) = state.withLock { state in
                state.idle -= 1
                guard waited, let runLoop = state.ready.popFirst() else {
                    // A run loop scheduled while this worker timed out counted on it as idle, and
                    // started no watchdog look: the worker stays for it (the signal meant for it is still
                    // there) rather than leave it waiting for a worker that may be blocked.
                    if !state.isShortOfWorkers, state.stopsUnderWay > 0 || state.workers.count > baseWorkers {
                        return (nil, false, Ending(joins: state.end(identifier)))
                    }
                    return (nil, false, nil)
                }
                state.workers[identifier]?.turnStart = turnStart
                return (runLoop, beginsWatching(&state), nil)
            }
            if let ending {
                if let retired = ending.joins { pthread_join(retired, nil) }
                workerEnded.signal()
                return
            }
            if startsWatching { scheduleLook() }
            guard let runLoop else { continue }
            let more = runLoop.runTurn(limit: turnLength)
            state.withLock { $0.workers[identifier]?.turnStart = nil }
            if more { schedule(runLoop) }
        }
    }

    /// What a worker does as it ends: join the worker that retired before it, if any.
    private struct Ending {
        var joins: pthread_t?
    }

    /// The watchdog's next look, ``lookInterval`` from now, on the deadline timers' thread.
    private func scheduleLook() {
        timers.schedule(at: timers.clock.now + lookInterval) { [self] in look() }
    }

    /// Ends the workers once the run loops ready now have run, and waits for them (at most
    /// `timeout`: a worker blocked in an app's callback ends once it returns), joining their
    /// threads. Called on a worker (the last reference to a system released in a callback), it
    /// does not wait for that worker, which ends after its turn.
    package func stop(within timeout: Duration = .seconds(1)) {
        state.withLock { $0.stopsUnderWay += 1 }
        let deadline = ContinuousClock.now + timeout
        let me = pthread_self()
        while true {
            let waiting = state.withLock { state in
                state.workers.values.count { worker in worker.thread.map { pthread_equal($0, me) == 0 } ?? true }
            }
            let left = deadline - .now
            guard waiting > 0, left > .zero else { break }
            // A wake-up for each worker still there: one that ran a ready run loop took another's.
            for _ in 0..<waiting { readyCount.signal() }
            _ = workerEnded.wait(atMost: left)
        }
        let (ended, restarts) = state.withLock { state in
            state.stopsUnderWay -= 1
            defer { (state.ended, state.retired) = ([], nil) }
            // A run loop posted while the workers ended starts one again.
            let restarts = !state.ready.isEmpty && state.workers.isEmpty ? state.reserveWorker() : nil
            return (state.ended + (state.retired.map { [$0] } ?? []), restarts)
        }
        for thread in ended where pthread_equal(thread, me) == 0 { pthread_join(thread, nil) }
        for thread in ended where pthread_equal(thread, me) != 0 { pthread_detach(thread) }
        if let restarts { startWorker(restarts) }
    }

    /// One look of the watchdog, while run loops wait with no idle worker: adds a worker while fewer
    /// than ``baseWorkers`` progress, and looks again until no run loop waits. Short, with no user
    /// code: a deadline timers' action.
    private func look() {
        let now = timers.clock.now
        let longTurns = state.withLock { $0.longTurns(threshold: stallThreshold, now: now) }
        // Read in `/proc` with the lock released: a worker in a long turn whose thread sleeps is
        // blocked in a wait; one that is only slow, or waiting for a processor, is not stalled.
        let stalled = longTurns.count { !PosixThread.isRunnable($0) }
        let (watching, newWorker) = state.withLock { state -> (Bool, Int?) in
            guard state.isShortOfWorkers else {
                state.isWatching = false
                return (false, nil)
            }
            let progressing = state.workers.count - stalled
            let adds = progressing < baseWorkers && state.workers.count < maximumWorkers
            return (true, adds ? state.reserveWorker() : nil)
        }
        if let newWorker { startWorker(newWorker) }
        if watching { scheduleLook() }
    }
}
