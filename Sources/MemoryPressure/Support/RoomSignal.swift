import Synchronization

/// Where threads wait for room under the budget: a condition variable that the account signals
/// whenever its footprint may have fallen (bytes freed, a sample completed, the budget raised), so a
/// waiting allocation sleeps without polling and wakes as soon as room may be there.
///
/// Signalling costs one atomic load when nobody waits. A waiter counts itself before it checks
/// for room and the signaller changes the counters before it reads the count, so a wake-up between
/// the check and the sleep is not lost: the signaller takes the mutex, which the waiter holds until
/// it sleeps. On a weakly ordered machine such a wake-up can be seen late, never later than the
/// next sample, which signals too.
final class RoomSignal: Sendable {
    private let condition = ThreadCondition()
    private let waiters = Atomic<Int>(0)

    init() {}

    /// Waits until `hasRoom` holds, checking it at once and after every signal; false when `timeout`
    /// passes first.
    func wait(atMost timeout: Duration, until hasRoom: () -> Bool) -> Bool {
        waiters.add(1, ordering: .sequentiallyConsistent)
        defer { waiters.subtract(1, ordering: .sequentiallyConsistent) }
        let deadline = ThreadCondition.deadline(after: timeout)
        return condition.withLock {
            while !hasRoom() {
                if !condition.wait(until: deadline) { return hasRoom() }
            }
            return true
        }
    }

    /// Wakes every waiter to check again; nothing when none waits.
    @inline(__always)
    func signal() {
        guard waiters.load(ordering: .sequentiallyConsistent) > 0 else { return }
        condition.withLock { condition.broadcast() }
    }
}
