#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import HeapModule
import Synchronization

/// Every deadline of the process's apps and waits, in one timer heap on one thread: launch and
/// callback deadlines, background expiry, `willTerminate`, warning timeouts and drains.
///
/// A sleeping task per deadline cannot be truly cancelled: `Task.sleep` returns at once when its
/// task is cancelled, but the runtime's timer for it stays queued, holding memory, until the
/// original deadline. At a few thousand transitions a second with 5-second deadlines that held tens
/// of MiB. Here a cancelled deadline lets go of its action at once, and the heap drops its entry
/// when it comes up (or when cancelled entries outnumber the live ones).
///
/// Actions run on the timer thread, in deadline order, with no lock held; they must be short and
/// run no user code (they post work to a run loop, change an app's state and hand its events to a
/// task, resolve a completion): one that waited would hold up every deadline of the process. The thread starts with the
/// first deadline and waits in `poll` on a ``WakePipe`` until the earliest deadline or a new, earlier
/// one: nothing polls, nothing sleeps while no deadline is set.
final class DeadlineTimers: Sendable {
    /// The timers of the process.
    static let shared = DeadlineTimers()

    /// A scheduled deadline, to cancel it with.
    struct Token: Hashable, Sendable {
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
        var hasThread = false

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

    private let state = LibraryLock(State())
    private let wake: WakePipe

    private init() {
        do {
            wake = try WakePipe()
        } catch {
            preconditionFailure("no pipe could be made for the apps' deadlines: \(error)")
        }
    }

    /// Runs `action` on the timer thread at `deadline` (at once if it has passed), unless cancelled
    /// first.
    @discardableResult
    func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Token {
        let (token, startsThread, isEarliest) = state.withLock { state in
            let token = state.nextToken
            state.nextToken += 1
            let isEarliest = state.heap.min.map { deadline < $0.deadline } ?? true
            state.heap.insert(Entry(deadline: deadline, token: token))
            state.actions[token] = action
            defer { state.hasThread = true }
            return (token, !state.hasThread, isEarliest)
        }
        if startsThread {
            do {
                let thread = try PosixThread.start(named: "app-deadlines") { self.run() }
                pthread_detach(thread)
            } catch {
                preconditionFailure("no thread could be started for the apps' deadlines: \(error)")
            }
        } else if isEarliest {
            wake.wake()
        }
        return Token(rawValue: token)
    }

    /// Cancels the deadline: its action does not run (unless it runs already) and is released now.
    func cancel(_ token: Token) {
        // The action is released as this statement ends, outside the lock: it may hold the last
        // reference to anything.
        _ = state.withLock { state in
            defer { state.compactIfMostlyCancelled() }
            return state.actions.removeValue(forKey: token.rawValue)
        }
    }

    /// The deadlines set and not yet run or cancelled, and the heap's entries (cancelled ones
    /// included until dropped).
    var counts: (pending: Int, entries: Int) { state.withLock { ($0.actions.count, $0.heap.count) } }

    /// The timer thread's life: run what is due, then wait for the next deadline or a wake-up.
    private func run() {
        while true {
            let (due, next) = state.withLock { $0.takeDue(at: .now) }
            for action in due { callOut(action) }
            guard due.isEmpty else { continue }
            wake.wait(until: next)
        }
    }
}
