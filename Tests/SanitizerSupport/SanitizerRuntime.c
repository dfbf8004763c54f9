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
#if __has_feature(address_sanitizer)
// LeakSanitizer's suppressions: what XCTest's own runner allocates and never frees (its suite runs
// and observers, reported at exit of the XCTest pass, which runs no test: ours use Swift Testing).
// Leaks allocated by our code, or by Swift Testing on our behalf, are still reported.
const char *__lsan_default_suppressions(void) {
    return "leak:libXCTest.so\n";
}
#endif
#endif
