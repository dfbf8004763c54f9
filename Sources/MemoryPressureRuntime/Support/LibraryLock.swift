#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// The library's lock: a `Mutex` that, in debug builds, counts how many of the library's locks the
/// current thread holds, so that ``callOut(_:)`` can trap where user code would run under one.
///
/// The rule it checks (DESIGN.md, "Concurrency rules"): no user code and no call-out runs while a
/// lock of the library is held. Every lock of the library is one of these (or a
/// ``ThreadCondition``, which counts the same way), and every call into code that is not the
/// library's own (a delegate, an observer, a handler, a renderer, a sample source, a log handler, a
/// continuation resumed) goes through ``callOut(_:)``. The test suite runs in debug, so a call-out
/// reached under a lock fails a test instead of waiting to deadlock a service. In release builds
/// the lock is a plain `Mutex` and the check costs nothing.
@usableFromInline
package struct LibraryLock<Value: ~Copyable>: ~Copyable, Sendable {
    @usableFromInline let mutex: Mutex<Value>

    /// A lock guarding `value`.
    @inlinable
    package init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with the lock held, counted as held by this thread in debug builds.
    @inlinable
    package func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        #if DEBUG
        HeldLibraryLocks.enter()
        defer { HeldLibraryLocks.leave() }
        #endif
        return try mutex.withLock(body)
    }

    /// Runs `body` with the lock held if it is free now, counted as ``withLock(_:)`` counts it;
    /// returns nil, running nothing, when another thread holds it.
    @inlinable
    package func withLockIfAvailable<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result? {
        #if DEBUG
        HeldLibraryLocks.enter()
        defer { HeldLibraryLocks.leave() }
        #endif
        return try mutex.withLockIfAvailable(body)
    }
}

/// Runs `body`, a call into code that is not the library's own, and traps in debug builds when the
/// thread holds any of the library's locks (``LibraryLock``, ``ThreadCondition``): such code may
/// take a lock of its own, wait, or call back into the library, and under one of ours that is a
/// deadlock or a recursive lock waiting to happen.
@inlinable
package func callOut<Result: ~Copyable, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
    #if DEBUG
    HeldLibraryLocks.checkNone()
    #endif
    return try body()
}

/// How many of the library's locks the current thread holds: a thread-specific count, kept in
/// debug builds only.
@usableFromInline
enum HeldLibraryLocks {
    /// The thread-specific slot of the count, made once for the process.
    private static let slot: pthread_key_t = {
        var key = pthread_key_t()
        guard pthread_key_create(&key, nil) == 0 else {
            preconditionFailure("no thread-specific key could be made for the lock checker")
        }
        return key
    }()

    /// The locks the current thread holds.
    @usableFromInline package static var count: Int {
        get { Int(bitPattern: pthread_getspecific(slot)) }
        set { pthread_setspecific(slot, UnsafeRawPointer(bitPattern: newValue)) }
    }

    /// The thread takes a lock.
    @usableFromInline package static func enter() {
        count += 1
    }

    /// The thread lets go of a lock.
    @usableFromInline package static func leave() {
        count -= 1
    }

    /// Traps when the thread holds a lock: a call-out is about to run under it.
    @usableFromInline static func checkNone() {
        let held = count
        precondition(held == 0, "a call-out (user code, a continuation, an event) runs while this thread holds \(held) of the library's locks")
    }
}
