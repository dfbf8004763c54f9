#ifndef SANITIZER_SUPPORT_H
#define SANITIZER_SUPPORT_H

/// Whether this test process runs under ThreadSanitizer or AddressSanitizer
/// (`swift test --sanitize=thread` or `--sanitize=address`): 1 if so, else 0.
///
/// Under a sanitizer the sanitizer's allocator, not jemalloc, serves malloc, so tests whose premise
/// is that jemalloc is the process allocator do not apply.
int sanitizer_support_is_active(void);

#endif
