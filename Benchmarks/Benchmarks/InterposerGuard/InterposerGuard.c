// The benchmark tool preloads ordo-one's malloc interposer (the `MallocInterposer` trait). Its
// `free` tells its own blocks from others by reading the bytes just before the pointer. Its
// `malloc` and `calloc` put a header there, but aligned allocations (posix_memalign,
// aligned_alloc) and a realloc of such a block pass through to the allocator without one. glibc
// keeps chunk metadata before every block, so the read is always safe there; jemalloc does not.
// jemalloc places a small slab at the first byte of a fresh mapping, and when an aligned
// allocation takes that slab's first region, the interposer's read of the page before faults
// (SIGSEGV in `replacement_free`, reached from `swift_slowDealloc`).
//
// The functions below sit in the executable, which the dynamic linker searches before the
// preloaded interposer: each calls the interposer's own function (RTLD_NEXT), so every allocation
// is still counted, and when the block it returns starts a page whose previous page is unmapped,
// maps that page read-only (zero-filled, costing no memory until touched, and only address space
// after). The interposer's read then finds zeros, sees a foreign block, and hands it to jemalloc.
// memalign and valloc are not covered: nothing in these processes calls them.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "InterposerGuard.h"

/// Makes the page before `block` readable when `block` starts a page and that page is unmapped.
static void guard_page_before(void *block) {
    static _Atomic size_t cached_page_size;
    size_t page_size = atomic_load_explicit(&cached_page_size, memory_order_relaxed);
    if (page_size == 0) {
        page_size = (size_t)sysconf(_SC_PAGESIZE);
        atomic_store_explicit(&cached_page_size, page_size, memory_order_relaxed);
    }
    if (block == NULL || ((uintptr_t)block & (page_size - 1)) != 0) return;
    char *before = (char *)block - page_size;
    unsigned char resident;
    // mincore fails with ENOMEM exactly when the range is not mapped.
    if (mincore(before, page_size, &resident) == 0) return;
    // MAP_FIXED_NOREPLACE never replaces a mapping made by another thread in the meantime.
    (void)mmap(before, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
}

/// The next definition of `name` after the executable's: the interposer's when it is preloaded,
/// the allocator's otherwise. Looked up once; dlsym allocates only through malloc and calloc.
static void *next_definition(_Atomic(void *) *cache, const char *name) {
    void *found = atomic_load_explicit(cache, memory_order_acquire);
    if (found == NULL) {
        found = dlsym(RTLD_NEXT, name);
        atomic_store_explicit(cache, found, memory_order_release);
    }
    return found;
}

typedef int (*posix_memalign_function)(void **, size_t, size_t);
typedef void *(*aligned_alloc_function)(size_t, size_t);
typedef void *(*realloc_function)(void *, size_t);

int posix_memalign(void **block, size_t alignment, size_t size) {
    static _Atomic(void *) next;
    int result = ((posix_memalign_function)next_definition(&next, "posix_memalign"))(block, alignment, size);
    if (result == 0) guard_page_before(*block);
    return result;
}

void *aligned_alloc(size_t alignment, size_t size) {
    static _Atomic(void *) next;
    void *block = ((aligned_alloc_function)next_definition(&next, "aligned_alloc"))(alignment, size);
    guard_page_before(block);
    return block;
}

void *realloc(void *old, size_t size) {
    static _Atomic(void *) next;
    void *block = ((realloc_function)next_definition(&next, "realloc"))(old, size);
    guard_page_before(block);
    return block;
}
