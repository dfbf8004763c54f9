#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The library's lock: a mutex that, in debug builds, counts how many of the library's locks the
/// current thread holds, so that ``callOut(_:)`` can trap where user code would run under one.
///
/// The rule it checks (DESIGN.md, "Concurrency rules"): no user code and no call-out runs while a
/// lock of the library is held. Every lock of the library is one of these (or a
/// ``ThreadCondition``, which counts the same way), and every call into code that is not the
/// library's own (a delegate, an observer, a handler, a renderer, a sample source, a log handler, a
/// continuation resumed) goes through ``callOut(_:)``. The test suite runs in debug, so a call-out
/// reached under a lock fails a test instead of waiting to deadlock a service. In release builds
/// the check costs nothing.
///
/// ## Why not `Synchronization.Mutex`
/// On Linux, a contended `Mutex` spins 1,000 `pause` instructions before it waits in the kernel:
/// about 50 µs on a processor whose `pause` takes 140 cycles, while the thread that holds the lock
/// (on a machine of 2 cores, often waiting for the very processor that spins) gets nothing done.
/// An app's record is taken by its caller's task and by its run loop's worker at once on every
/// transition, so a quarter of a launch's time went to that spin (`perf` of `Scale-tenants:10000`).
/// This lock is glibc's adaptive mutex, which spins about 100 times before it waits, as NIOLock's
/// pthread mutex does not spin at all; it lives in one allocation with the value it guards, as NIOLock's does.
@usableFromInline
package struct LibraryLock<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    // @unchecked: the value is read and written only with the mutex locked.

    /// One allocation: the mutex, then the value (at ``valueOffset``).
    @usableFromInline let memory: UnsafeMutableRawPointer

    /// A lock guarding `value`.
    @inlinable
    package init(_ value: consuming sending Value) {
        memory = .allocate(
            byteCount: Self.valueOffset + max(1, MemoryLayout<Value>.size),
            alignment: max(MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<Value>.alignment)
        )
        let mutex = memory.bindMemory(to: pthread_mutex_t.self, capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if canImport(Glibc)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        #endif
        let made = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(made == 0, "pthread_mutex_init failed: \(made)")
        (memory + Self.valueOffset).bindMemory(to: Value.self, capacity: 1).initialize(to: value)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        value.deinitialize(count: 1)
        memory.deallocate()
    }

    /// Where the value lies in ``memory``: after the mutex, aligned for the value.
    @inlinable
    static var valueOffset: Int {
        let alignment = MemoryLayout<Value>.alignment
        return (MemoryLayout<pthread_mutex_t>.size + alignment - 1) / alignment * alignment
    }

    @inlinable
    var mutex: UnsafeMutablePointer<pthread_mutex_t> {
        memory.assumingMemoryBound(to: pthread_mutex_t.self)
    }

    @inlinable
    var value: UnsafeMutablePointer<Value> {
        (memory + Self.valueOffset).assumingMemoryBound(to: Value.self)
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
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "pthread_mutex_lock failed: \(locked)")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
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
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
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
