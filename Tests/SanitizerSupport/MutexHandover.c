// Shows ThreadSanitizer how Synchronization.Mutex hands a contended lock from one thread to the next.
//
// A Mutex's uncontended lock and unlock are atomics inlined into our code, which ThreadSanitizer
// sees. Its contended path, `_MutexHandle._lockSlow`, `_tryLockSlow` and `_unlockSlow` (a spin, then
// FUTEX_LOCK_PI / FUTEX_UNLOCK_PI), runs inside libswiftSynchronization.so, which is not
// instrumented: a lock taken there creates no happens-before edge ThreadSanitizer knows of, so two
// critical sections of one Mutex are reported as racing whenever the lock was contended
// (tools/tsan-mutex-false-positive.swift shows it).
//
// This file defines those three functions. Each calls the library's own (the next definition,
// through dlsym), and tells ThreadSanitizer what it did: `__tsan_acquire` on the Mutex's word after
// the lock is taken, `__tsan_release` on it before the lock is given up: what ThreadSanitizer's own
// interceptors do for a pthread mutex. Nothing is suppressed, so a real race is still reported.
//
// It is compiled in two ways:
//   - into the tests, under ThreadSanitizer only (empty otherwise): the definitions in the test
//     executable take the calls of our code, and of every library in it;
//   - by tools/ci-sanitizers, with MUTEX_HANDOVER_PRELOAD, into a shared object preloaded
//     (LD_PRELOAD) into the `swift test` run, so the `mempressure` processes the end-to-end tests
//     start get it too. There it may also load into processes that are not under ThreadSanitizer
//     (the toolchain's own); the ThreadSanitizer entry points are therefore looked up, and where
//     they are absent the functions only pass the call on.
//
// The functions are Swift methods of `_MutexHandle`: `swiftcall`, with `self` (the address of the
// lock's word) in the context register. Their mangled names are ABI and do not change.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MUTEX_HANDOVER_ACTIVE 1
#endif
#endif
#if defined(MUTEX_HANDOVER_PRELOAD)
#define MUTEX_HANDOVER_ACTIVE 1
#endif

#ifdef MUTEX_HANDOVER_ACTIVE
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SWIFTCALL __attribute__((swiftcall))
#define SWIFT_SELF __attribute__((swift_context))

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

typedef SWIFTCALL void (*LockSlow)(uint32_t owner, void *handle SWIFT_SELF);
typedef SWIFTCALL bool (*TryLockSlow)(void *handle SWIFT_SELF);
typedef SWIFTCALL void (*UnlockSlow)(void *handle SWIFT_SELF);
typedef void (*SyncAnnotation)(void *address);

static LockSlow next_lock_slow;
static TryLockSlow next_try_lock_slow;
static UnlockSlow next_unlock_slow;
static SyncAnnotation tsan_acquire;
static SyncAnnotation tsan_release;

// Resolved once, before any thread can take a Mutex.
__attribute__((constructor)) static void resolve_mutex_handover(void) {
    next_lock_slow = (LockSlow)dlsym(RTLD_NEXT, LOCK_SLOW);
    next_try_lock_slow = (TryLockSlow)dlsym(RTLD_NEXT, TRY_LOCK_SLOW);
    next_unlock_slow = (UnlockSlow)dlsym(RTLD_NEXT, UNLOCK_SLOW);
    tsan_acquire = (SyncAnnotation)dlsym(RTLD_DEFAULT, "__tsan_acquire");
    tsan_release = (SyncAnnotation)dlsym(RTLD_DEFAULT, "__tsan_release");
}

// Reached only through a Mutex, which means libswiftSynchronization.so is loaded; if its functions
// were not found all the same, the lock cannot work, so stop and say why.
static void require(const void *next, const char *name) {
    if (next == NULL) {
        fprintf(stderr, "MutexHandover: %s not found after this definition\n", name);
        abort();
    }
}

SWIFTCALL void mutex_handover_lock_slow(uint32_t owner, void *handle SWIFT_SELF) __asm__(LOCK_SLOW);
SWIFTCALL void mutex_handover_lock_slow(uint32_t owner, void *handle SWIFT_SELF) {
    require(next_lock_slow, LOCK_SLOW);
    next_lock_slow(owner, handle);
    if (tsan_acquire) tsan_acquire(handle);
}

SWIFTCALL bool mutex_handover_try_lock_slow(void *handle SWIFT_SELF) __asm__(TRY_LOCK_SLOW);
SWIFTCALL bool mutex_handover_try_lock_slow(void *handle SWIFT_SELF) {
    require(next_try_lock_slow, TRY_LOCK_SLOW);
    bool locked = next_try_lock_slow(handle);
    if (locked && tsan_acquire) tsan_acquire(handle);
    return locked;
}

SWIFTCALL void mutex_handover_unlock_slow(void *handle SWIFT_SELF) __asm__(UNLOCK_SLOW);
SWIFTCALL void mutex_handover_unlock_slow(void *handle SWIFT_SELF) {
    require(next_unlock_slow, UNLOCK_SLOW);
    if (tsan_release) tsan_release(handle);
    next_unlock_slow(handle);
}
#endif
