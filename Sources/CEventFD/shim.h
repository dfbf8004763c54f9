#ifndef SWIFT_MEMORY_PRESSURE_CEVENTFD_SHIM_H
#define SWIFT_MEMORY_PRESSURE_CEVENTFD_SHIM_H

// eventfd(2), which the Glibc module leaves out: cgroup v1's memory.pressure_level notifications
// are delivered through one.
#ifdef __linux__
#include <sys/eventfd.h>
#endif

#endif
