#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// Where allocations wait for room under the budget: a condition variable for threads, and a list of
/// suspended tasks, that the account signals whenever its footprint may have fallen (bytes freed, a
/// sample completed, the budget raised), so a waiting allocation sleeps without polling and wakes as
/// soon as room may be there.
///
/// Signalling costs one atomic load when nobody waits. A waiter counts itself before it checks
/// for room and the signaller changes the counters before it reads the count, so a wake-up between
/// the check and the sleep is not lost: the signaller takes the mutex, which a waiting thread holds
/// until it sleeps, and a suspending task checks again once it is on the list the signaller takes.
/// On a weakly ordered machine such a wake-up can be seen late, never later than the next sample,
/// which signals too.
@usableFromInline
package final class RoomSignal: Sendable {
    private let condition = ThreadCondition()
    private let waiters = Atomic<Int>(0)
    /// The suspended tasks' wake-ups, each resolved (outside the lock) by the next signal.
    private let suspended = LibraryLock<[Completion<Void>]>([])

    /// Where a suspended waiter's bound is kept.
    private let timers: DeadlineTimers

    /// The time the waits are bounded on: the timers' clock.
    private var clock: any LibraryClock { timers.clock }

    /// A signal whose waiters' bounds are read on the clock of `timers`, and whose suspended
    /// waiters' bounds are deadlines of `timers`. A step of a manual clock wakes the waiting threads
    /// to look at the time again.
    package init(timers: DeadlineTimers) {
        self.timers = timers
        let condition = condition
        timers.clock.onStep { condition.withLock { condition.broadcast() } }
    }

    /// Waits until `hasRoom` holds, checking it at once and after every signal; false when `timeout`
    /// passes first on the timers' clock.
    package func wait(atMost timeout: Duration, until hasRoom: () -> Bool) -> Bool {
        waiters.add(1, ordering: .sequentiallyConsistent)
        defer { waiters.subtract(1, ordering: .sequentiallyConsistent) }
        let deadline = clock.now + timeout
        return condition.withLock {
            while !hasRoom() {
                guard clock.now < deadline else { return false }
                // Until the deadline on the continuous clock; with no time limit on a manual one,
                // whose steps broadcast (see `init`). Either way the loop looks at the time again.
                // A manual clock's lock is taken briefly under the mutex here; the clock wakes its
                // waiters with no lock held, so the two are only ever taken in this order.
                let sleepUntil = clock.sleepDeadline(for: deadline).map { ThreadCondition.deadline(after: max(.zero, $0 - .now)) }
                if !condition.wait(until: sleepUntil), clock.now >= deadline { return hasRoom() }
            }
            return true
        }
    }

    /// As ``wait(atMost:until:)``, suspending the task instead of blocking its thread; false too
    /// when the task is cancelled before there is room.
    package func waitSuspending(atMost timeout: Duration, until hasRoom: () -> Bool) async -> Bool {
        waiters.add(1, ordering: .sequentiallyConsistent)
        defer { waiters.subtract(1, ordering: .sequentiallyConsistent) }
        let deadline = clock.now + timeout
        while !hasRoom() {
            let left = deadline - clock.now
            guard left > .zero, !Task.isCancelled else { return hasRoom() }
            let wakeUp = Completion<Void>()
            suspended.withLock { $0.append(wakeUp) }
            // A signal that came between the check above and the append found nothing to wake.
            if hasRoom() { return true }
            _ = await wakeUp.value(timeout: left, on: timers)
        }
        return true
    }

    /// Wakes every waiter to check again; nothing when none waits.
    @inline(__always)
    @usableFromInline
    package func signal() {
        guard waiters.load(ordering: .sequentiallyConsistent) > 0 else { return }
        wakeAll()
    }

    @inline(never)
    private func wakeAll() {
        condition.withLock { condition.broadcast() }
        let wakeUps = suspended.withLock { suspended in
            defer { suspended.removeAll() }
            return suspended
        }
        for wakeUp in wakeUps { wakeUp.resolve(()) }
    }
}

extension RoomSignal {
    /// Marks the calling thread as the one that makes room: the reclamation thread, where the
    /// ladder purges and terminates, and where the service's observers of its events, eviction
    /// handlers and discard callbacks run. An allocation made there could only wait for room that
    /// this very thread makes, so it does not wait: ``mayWaitOnThisThread`` is false.
    package static func neverWaitOnThisThread() {
        pthread_setspecific(noWaitKey, UnsafeRawPointer(bitPattern: 1))
    }

    /// Whether an allocation on the calling thread may wait for room (see
    /// ``neverWaitOnThisThread()``).
    package static var mayWaitOnThisThread: Bool {
        pthread_getspecific(noWaitKey) == nil
    }

    private static let noWaitKey: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed: errno \(status)")
        return key
    }()
}
