// Settings the sanitizer runtimes read when the tests run under one; nothing otherwise.
#include "SanitizerSupport.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

int sanitizer_support_is_active(void) {
#ifdef SANITIZED
    return 1;
#else
    return 0;
#endif
}

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
// ThreadSanitizer's suppressions, compiled in so that a plain `swift test --sanitize=thread` uses
// them. Each is a proven false positive; see tools/tsan-mutex-false-positive.swift and RELIABILITY.md.
//
// Synchronization.Mutex on Linux takes its uncontended path with atomics that are inlined into our
// code, which ThreadSanitizer sees; its contended path (_lockSlow, _unlockSlow: a spin, then
// FUTEX_LOCK_PI / FUTEX_UNLOCK_PI) runs inside libswiftSynchronization.so, which is not instrumented.
// A lock handed over through that path creates no happens-before edge that ThreadSanitizer knows of,
// so two critical sections of one Mutex are reported as racing whenever the lock was contended.
//
// A report is suppressed when the top frame of one of its accesses is the body of a closure passed to
// Mutex.withLock, recognised by its mangled type: a non-escaping closure taking an `inout` value and
// returning a `sending` result: `(sending inout Value) throws(E) -> sending Result` ("zYu" ...
// "YTXEfU") or, for a tuple value, `(inout (…)) -> sending Result` ("tz_tYTXEfU"). What such a body
// touches directly is the Mutex's value, which safe Swift reaches through withLock alone, or its own
// locals and captures, which Swift 6's checking keeps from being shared across threads unguarded;
// so the other access of such a report also holds the lock. Accesses whose top frame is anywhere
// else are reported, and tools/ci-sanitizers checks that a real race is still reported.
const char *__tsan_default_suppressions(void) {
    return "race_top:zYu*YTXEfU\n"
           "race_top:tz_tYTXEfU\n";
}
#endif
#if __has_feature(address_sanitizer)
// LeakSanitizer's suppressions: what XCTest's own runner allocates and never frees (its suite runs
// and observers, reported at exit of the XCTest pass, which runs no test: ours use Swift Testing).
// Leaks allocated by our code, or by Swift Testing on our behalf, are still reported.
const char *__lsan_default_suppressions(void) {
    return "leak:libXCTest.so\n";
}
#endif
#endif
