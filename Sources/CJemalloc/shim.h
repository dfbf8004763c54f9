#ifndef SWIFT_MEMORY_PRESSURE_CJEMALLOC_SHIM_H
#define SWIFT_MEMORY_PRESSURE_CJEMALLOC_SHIM_H

#include <jemalloc/jemalloc.h>

// jemalloc's flag macros take arguments, so Swift cannot import them; these wrappers can.

/// `MALLOCX_ARENA(arena)`: allocate from the given arena.
static inline int cjemalloc_mallocx_arena(unsigned arena) {
    return MALLOCX_ARENA(arena);
}

/// `MALLOCX_TCACHE_NONE`: bypass the thread cache, so the bytes are attributed to the arena at once.
static inline int cjemalloc_mallocx_tcache_none(void) {
    return MALLOCX_TCACHE_NONE;
}

/// `MALLOCX_TCACHE(tc)`: allocate from, and free into, the explicit thread cache `tc` (`tcache.create`).
static inline int cjemalloc_mallocx_tcache(unsigned tc) {
    return MALLOCX_TCACHE(tc);
}

/// `MALLOCX_LG_ALIGN(lg)`: align to `1 << lg` bytes.
static inline int cjemalloc_mallocx_lg_align(unsigned lg) {
    return MALLOCX_LG_ALIGN(lg);
}

/// `MALLOCX_ZERO`: zero-fill the allocation.
static inline int cjemalloc_mallocx_zero(void) {
    return MALLOCX_ZERO;
}

/// `MALLCTL_ARENAS_ALL`: the pseudo-index that addresses every arena at once.
static inline unsigned cjemalloc_arenas_all(void) {
    return MALLCTL_ARENAS_ALL;
}

/// `MALLCTL_ARENAS_DESTROYED`: the pseudo-index of the merged statistics of destroyed arenas.
static inline unsigned cjemalloc_arenas_destroyed(void) {
    return MALLCTL_ARENAS_DESTROYED;
}

#endif
