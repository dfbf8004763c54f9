// Under a sanitizer, C++ operator new and delete go through malloc and free, which the sanitizer
// intercepts. Without this, libjemalloc's exported operator new serves some C++ allocations (the
// Swift runtime's and Testing's std::string buffers) that libstdc++ then frees with free(), which
// is the sanitizer's: ThreadSanitizer aborts at start ("CHECK failed: sanitizer_allocator_secondary").
// Without a sanitizer nothing is defined here and jemalloc serves both, as in production.
#include <cstdlib>
#include <new>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)

namespace {
void *allocate(std::size_t size) {
    if (void *pointer = std::malloc(size == 0 ? 1 : size)) return pointer;
    throw std::bad_alloc();
}

void *allocateAligned(std::size_t size, std::align_val_t alignment) {
    void *pointer = nullptr;
    std::size_t bytes = size == 0 ? 1 : size;
    std::size_t align = static_cast<std::size_t>(alignment);
    if (align < sizeof(void *)) align = sizeof(void *);
    if (posix_memalign(&pointer, align, bytes) == 0) return pointer;
    throw std::bad_alloc();
}
}  // namespace

void *operator new(std::size_t size) { return allocate(size); }
void *operator new[](std::size_t size) { return allocate(size); }
void *operator new(std::size_t size, const std::nothrow_t &) noexcept { return std::malloc(size == 0 ? 1 : size); }
void *operator new[](std::size_t size, const std::nothrow_t &) noexcept { return std::malloc(size == 0 ? 1 : size); }
void *operator new(std::size_t size, std::align_val_t alignment) { return allocateAligned(size, alignment); }
void *operator new[](std::size_t size, std::align_val_t alignment) { return allocateAligned(size, alignment); }
void *operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t &) noexcept {
    try { return allocateAligned(size, alignment); } catch (...) { return nullptr; }
}
void *operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t &) noexcept {
    try { return allocateAligned(size, alignment); } catch (...) { return nullptr; }
}

void operator delete(void *pointer) noexcept { std::free(pointer); }
void operator delete[](void *pointer) noexcept { std::free(pointer); }
void operator delete(void *pointer, std::size_t) noexcept { std::free(pointer); }
void operator delete[](void *pointer, std::size_t) noexcept { std::free(pointer); }
void operator delete(void *pointer, const std::nothrow_t &) noexcept { std::free(pointer); }
void operator delete[](void *pointer, const std::nothrow_t &) noexcept { std::free(pointer); }
void operator delete(void *pointer, std::align_val_t) noexcept { std::free(pointer); }
void operator delete[](void *pointer, std::align_val_t) noexcept { std::free(pointer); }
void operator delete(void *pointer, std::size_t, std::align_val_t) noexcept { std::free(pointer); }
void operator delete[](void *pointer, std::size_t, std::align_val_t) noexcept { std::free(pointer); }
void operator delete(void *pointer, std::align_val_t, const std::nothrow_t &) noexcept { std::free(pointer); }
void operator delete[](void *pointer, std::align_val_t, const std::nothrow_t &) noexcept { std::free(pointer); }

#endif
#endif
