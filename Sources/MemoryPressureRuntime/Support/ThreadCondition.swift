#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A mutex and a condition variable on the monotonic clock: what the library's own threads (the
/// run-loop workers, the reclamation thread, an allocation waiting for room) sleep
/// on. Tasks never wait on it.
package final class ThreadCondition: @unchecked Sendable {
    // @unchecked: the mutex and the condition live at fixed addresses for the object's lifetime and
    // are used only through pthread calls, which synchronise.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
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

    /// Runs `body` with the mutex held. `body` may call ``wait(until:)`` and the signalling methods.
    /// Counted as one of the library's locks held (``LibraryLock``) in debug builds.
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        #if DEBUG
        HeldLibraryLocks.enter()
        #endif
        defer {
            #if DEBUG
            HeldLibraryLocks.leave()
            #endif
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }

    /// With the mutex held: releases it and sleeps until signalled (or woken spuriously) or until
    /// `deadline` (from ``deadline(after:)``; nil waits without one), then takes it again. Returns
    /// false when the deadline passed.
    package func wait(until deadline: timespec?) -> Bool {
        guard var deadline else {
            pthread_cond_wait(condition, mutex)
            return true
        }
        return pthread_cond_timedwait(condition, mutex, &deadline) != ETIMEDOUT
    }

    /// Wakes one sleeper.
    package func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every sleeper.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// The monotonic clock's time `duration` from now, as ``wait(until:)`` takes it.
    package static func deadline(after duration: Duration) -> timespec {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = duration.components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return deadline
    }
}

/// A counting semaphore for the library's own threads, on a ``ThreadCondition``.
package final class ThreadSemaphore: @unchecked Sendable {
    // @unchecked: `count` is read and written only with the condition's mutex held.
    private let condition = ThreadCondition()
    private var count = 0

    package init() {}

    /// Adds one to the count, waking a waiter.
    package func signal() {
        condition.withLock {
            count += 1
            condition.signal()
        }
    }

    /// Takes one from the count, waiting while it is zero; false when `timeout` (nil: none) passes
    /// first.
    package func wait(atMost timeout: Duration? = nil) -> Bool {
        let deadline = timeout.map(ThreadCondition.deadline(after:))
        return condition.withLock {
            while count == 0 {
                if !condition.wait(until: deadline), count == 0 { return false }
            }
            count -= 1
            return true
        }
    }
}
