#ifndef INTERPOSER_GUARD_H
#define INTERPOSER_GUARD_H

// Linked into every benchmark suite, this target makes the benchmark tool's malloc interposer safe
// in a process whose malloc is jemalloc. It has no API: it defines posix_memalign, aligned_alloc
// and realloc in the executable, ahead of the preloaded interposer (see InterposerGuard.c).

#endif
