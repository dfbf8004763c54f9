#ifndef SWIFT_MEMORY_PRESSURE_CLINUXEVENTS_SHIM_H
#define SWIFT_MEMORY_PRESSURE_CLINUXEVENTS_SHIM_H

// The Linux event interfaces the Glibc module leaves out: eventfd(2), through which cgroup v1's
// memory.pressure_level notifications are delivered, and epoll(7), which the sampling thread waits
// in.
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

#endif
