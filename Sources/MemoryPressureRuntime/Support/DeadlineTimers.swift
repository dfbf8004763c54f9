#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import HeapModule
import Synchronization

/// Every deadline of a memory system's apps and waits, in one timer heap on one thread: launch and
/// callback deadlines, background expiry, `willTerminate`, warning timeouts and drains. It belongs
/// to an ``AppThreadGroup``, and its thread stops with the group.
///
/// A sleeping task per deadline cannot be truly cancelled: `Task.sleep` returns at once when its
/// task is cancelled, but the runtime's timer for it stays queued, holding memory, until the
/// original deadline. At a few thousand transitions a second with 5-second deadlines that held tens
/// of MiB. Here a cancelled deadline lets go of its action at once, and the heap drops its entry
/// when it comes up (or when cancelled entries outnumber the live ones).
///
/// Actions run on the timer thread, in deadline order, with no lock held; they must be short and
/// run no user code (they post work to a run loop, change an app's state and hand its events to a
/// task, resolve a completion): one that waited would hold up every deadline of the group. The
/// thread starts with the first deadline and waits in `poll` on a ``WakePipe`` until the earliest
/// deadline or a new, earlier one: nothing polls, nothing sleeps while no deadline is set.
/// ``stop()`` ends the thread and drops the deadlines set; a deadline set after it starts the thread
/// again.
package final class DeadlineTimers: Sendable {
    /// A scheduled deadline, to cancel it with.
    package struct Token: Hashable, Sendable {
        fileprivate let rawValue: UInt64
    }

    private struct Entry: Comparable {
        let deadline: ContinuousClock.Instant
        let token: UInt64

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.deadline, lhs.token) < (rhs.deadline, rhs.token)
        }
    }

    private struct State {
        var heap = Heap<Entry>()
        var actions: [UInt64: @Sendable () -> Void] = [:]
        var nextToken: UInt64 = 0
        /// The timer thread: one at a time, so that it alone drains the wake pipe. A thread that
        /// finds itself no longer the one running (a stop took it) ends.
        var thread = TimerThread.none
        /// The ``stop()`` calls under way: no thread starts meanwhile.
        var stopsUnderWay = 0

        /// Whether a deadline just set must start the thread: it has none and none is starting. If
        /// so, notes that one is.
        mutating func claimThreadStart() -> Bool {
            guard case .none = thread, stopsUnderWay == 0 else { return false }
            thread = .starting
            return true
        }

        /// Whether `me` is to go on running: it is the thread running, or the one starting.
        func keepsRunning(_ me: pthread_t) -> Bool {
            switch thread {
            case .none: false
            case .starting: true
            case .running(let running): pthread_equal(running, me) != 0
            }
        }

        /// Drops the heap's cancelled entries once they outnumber the live ones, and gives back the
        /// actions' storage once it is mostly empty.
        mutating func compactIfMostlyCancelled() {
            actions.shrinkIfSparse()
            guard heap.count > 64, heap.count > 2 * actions.count else { return }
            heap = Heap(heap.unordered.filter { actions[$0.token] != nil })
        }

        /// Takes the actions due at `now`, and tells the earliest deadline still set.
        mutating func takeDue(at now: ContinuousClock.Instant) -> (due: [@Sendable () -> Void], next: ContinuousClock.Instant?) {
            var due: [@Sendable () -> Void] = []
            while let earliest = heap.min {
                guard let action = actions[earliest.token] else {
                    heap.removeMin()
                    continue
                }
                guard earliest.deadline <= now else {
                    actions.shrinkIfSparse()
                    return (due, earliest.deadline)
                }
                heap.removeMin()
                actions[earliest.token] = nil
                due.append(action)
            }
            actions.shrinkIfSparse()
            return (due, nil)
        }
    }

    /// The timer thread's phase.
    private enum TimerThread {
        case none
        /// A caller is starting it.
        case starting
        case running(pthread_t)
    }

    private let state = LibraryLock(State())
    private let wake: WakePipe
    /// The time the deadlines are read against.
    package let clock: any LibraryClock

    /// Timers on `clock`: the continuous clock by default, or a manual one a test steps (the thread
    /// then runs what is due each time the clock is stepped, and sleeps in between).
    package init(clock: any LibraryClock = SystemClock()) {
        self.clock = clock
        let wake: WakePipe
        do {
            wake = try WakePipe()
        } catch {
            preconditionFailure("no pipe could be made for the apps' deadlines: \(error)")
        }
        self.wake = wake
        clock.onStep { wake.wake() }
    }

    /// Runs `action` on the timer thread at `deadline` (at once if it has passed), unless cancelled
    /// first.
    @discardableResult
    package func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Token {
        let (token, startsThread, isEarliest) = state.withLock { state in
            let token = state.nextToken
            state.nextToken += 1
            let isEarliest = state.heap.min.map { deadline < $0.deadline } ?? true
            state.heap.insert(Entry(deadline: deadline, token: token))
            state.actions[token] = action
            return (token, state.claimThreadStart(), isEarliest)
        }
        if startsThread {
            startThread()
        } else if isEarliest {
            wake.wake()
        }
        return Token(rawValue: token)
    }

    /// Starts the timer thread, with the lock released, once the caller has claimed its start.
    private func startThread() {
        let thread: pthread_t
        do {
            thread = try PosixThread.start(named: "app-deadlines") { self.run() }
        } catch {
            preconditionFailure("no thread could be started for the apps' deadlines: \(error)")
        }
        state.withLock { $0.thread = .running(thread) }
    }

    /// Ends the timer thread and drops every deadline set (their actions do not run), waiting for
    /// the thread to end unless called on it. A deadline set afterwards starts a new thread.
    package func stop() {
        let dropped = state.withLock { state in
            state.stopsUnderWay += 1
            defer {
                state.actions = [:]
                state.heap = Heap()
            }
            return state.actions
        }
        // This call takes the thread, so that it alone joins it; a thread another caller is
        // starting is waited for, to be taken too.
        var thread: pthread_t?
        while true {
            let taken: pthread_t?? = state.withLock { state in
                switch state.thread {
                case .starting: return nil
                case .none: return .some(nil)
                case .running(let running):
                    state.thread = .none
                    return .some(running)
                }
            }
            guard let taken else {
                sched_yield()
                continue
            }
            thread = taken
            break
        }
        wake.wake()
        if let thread {
            if pthread_equal(thread, pthread_self()) != 0 {
                pthread_detach(thread)
            } else {
                pthread_join(thread, nil)
            }
        }
        // A deadline set while the thread stopped starts it again.
        let restarts = state.withLock { state in
            state.stopsUnderWay -= 1
            return !state.actions.isEmpty && state.claimThreadStart()
        }
        // The actions, which may hold the last reference to anything, go with no lock held.
        _ = consume dropped
        if restarts { startThread() }
    }

    /// Cancels the deadline: its action does not run (unless it runs already) and is released now.
    package func cancel(_ token: Token) {
        // The action is released as this statement ends, outside the lock: it may hold the last
        // reference to anything.
        _ = state.withLock { state in
            defer { state.compactIfMostlyCancelled() }
            return state.actions.removeValue(forKey: token.rawValue)
        }
    }

    /// The deadlines set and not yet run or cancelled, and the heap's entries (cancelled ones
    /// included until dropped).
    package var counts: (pending: Int, entries: Int) { state.withLock { ($0.actions.count, $0.heap.count) } }

    /// The timer thread's life: run what is due, then wait for the next deadline or a wake-up,
    /// until ``stop()``.
    private func run() {
        let me = pthread_self()
        while true {
            let step = state.withLock { state -> (due: [@Sendable () -> Void], next: ContinuousClock.Instant?)? in
                guard state.keepsRunning(me) else { return nil }
                return state.takeDue(at: clock.now)
            }
            guard let (due, next) = step else { return }
            for action in due { callOut(action) }
            guard due.isEmpty else { continue }
            wake.wait(until: next.flatMap(clock.sleepDeadline))
        }
    }
}
