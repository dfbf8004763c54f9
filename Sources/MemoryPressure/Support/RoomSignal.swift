#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
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
final class RoomSignal: @unchecked Sendable {
    // @unchecked: the mutex and the condition live at fixed addresses for the object's lifetime and
    // are used only through pthread calls, which synchronise.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let waiters = Atomic<Int>(0)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Waits until `hasRoom` holds, checking it at once and after every signal; false when `timeout`
    /// passes first.
    func wait(atMost timeout: Duration, until hasRoom: () -> Bool) -> Bool {
        waiters.add(1, ordering: .sequentiallyConsistent)
        defer { waiters.subtract(1, ordering: .sequentiallyConsistent) }
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !hasRoom() {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT {
                return hasRoom()
            }
        }
        return true
    }

    /// Wakes every waiter to check again; nothing when none waits.
    @inline(__always)
    func signal() {
        guard waiters.load(ordering: .sequentiallyConsistent) > 0 else { return }
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }
}
