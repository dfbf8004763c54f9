import SanitizerSupport

/// The sanitizer this test process runs under, if any.
public enum Sanitizers {
    /// Whether the tests run under ThreadSanitizer or AddressSanitizer (`swift test
    /// --sanitize=thread` or `--sanitize=address`). The sanitizer's allocator then serves malloc
    /// instead of jemalloc, so a test whose premise is that jemalloc is the process allocator does
    /// not apply; and the sanitizers' own bookkeeping makes the process's footprint meaningless.
    public static let areActive = sanitizer_support_is_active() != 0
}
