#ifndef SWIFT_MEMORY_PRESSURE_CPROCESSSPAWN_SHIM_H
#define SWIFT_MEMORY_PRESSURE_CPROCESSSPAWN_SHIM_H

// Starting a child process with a step between fork and exec (joining its own cgroups), and the
// pidfd and process_madvise system calls the Glibc module does not expose (`syscall` is variadic, so Swift cannot call
// it). Everything here is `static inline`: the header is the whole module.
//
// The child's part runs between the fork and the exec of a multi-threaded parent, so it makes only
// raw system calls (no libc function a sanitizer could intercept) and touches nothing another
// thread may have locked.

#ifdef __linux__
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>
#include <poll.h>

// The same numbers on x86_64 and aarch64 (the generic table), for headers that predate them.
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif

/// clone3's argument, version 0 (64 bytes): enough for CLONE_PIDFD.
struct mp_clone_args {
    uint64_t flags;
    uint64_t pidfd;
    uint64_t child_tid;
    uint64_t parent_tid;
    uint64_t exit_signal;
    uint64_t stack;
    uint64_t stack_size;
    uint64_t tls;
};

#define MP_CLONE_PIDFD 0x00001000ULL

/// Which step of a spawn failed.
typedef enum {
    mp_spawn_stage_none = 0,
    /// The parent could not make the pipe that reports the child's failures.
    mp_spawn_stage_pipe = 1,
    /// Neither clone3 nor clone could make the child.
    mp_spawn_stage_fork = 2,
    /// The child could not join one of its cgroups (writing to `cgroup.procs`).
    mp_spawn_stage_cgroup = 3,
    /// The child could not make its own process group.
    mp_spawn_stage_process_group = 4,
    /// The child could not change to its working directory.
    mp_spawn_stage_directory = 5,
    /// execve failed.
    mp_spawn_stage_exec = 6,
    /// The child could not place its inherited descriptors.
    mp_spawn_stage_descriptors = 7,
    /// The child could not ask for its parent-death signal, or its parent had already died.
    mp_spawn_stage_parent_death = 8,
} mp_spawn_stage;

typedef struct {
    /// The child's pid; 0 when none was made.
    pid_t pid;
    /// A pidfd for the child (from CLONE_PIDFD, or pidfd_open after a plain clone); -1 when the
    /// kernel has none.
    int pidfd;
    /// The step that failed, or mp_spawn_stage_none.
    int stage;
    /// The errno of the failed step.
    int error;
    /// Whether clone3 made the child (false: the plain clone fallback).
    int used_clone3;
} mp_spawn_result;

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#define MP_CLOSE_RANGE_CLOEXEC (1U << 2)

/// The kernel's `struct sigaction` for `rt_sigaction` (not libc's): the handler first, then the
/// flags, the restorer and the mask. Only the handler is read, and an all-zero one sets `SIG_DFL`.
struct mp_kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
};

/// The child's side: ask for `parent_death_signal` (0: none) when the thread that made it ends,
/// join the cgroups, make a process group, change directory, put the inherited descriptors at 3,
/// 4, … and mark every other descriptor from there up close-on-exec, exec.
/// Reports the failed step and errno on `report` and exits 127. Never returns.
///
/// Every step is a raw system call, not the libc function: a sanitizer intercepts those, and its
/// interceptor, run in a child cloned from one thread of a multi-threaded parent, may wait for a
/// lock another thread of the parent held at the clone, which no thread here will release
/// (ThreadSanitizer's `close` did, and the spawn waited on the child for ever).
// Not instrumented by a sanitizer either: ThreadSanitizer's function-entry hook, in the child, also
// waited for a lock another thread held at the clone.
#define MP_UNINSTRUMENTED __attribute__((disable_sanitizer_instrumentation, no_sanitize("thread", "address")))

MP_UNINSTRUMENTED
static inline void mp_spawn_child(const char *path, char *const argv[], char *const envp[], const char *directory,
                                  const int *cgroup_procs, int cgroup_count,
                                  const int *inherited, int inherited_count,
                                  int parent_death_signal, pid_t parent, int report) {
    int stage = mp_spawn_stage_none;
    // The kernel sends the signal when the thread that made the child ends (the whole process's
    // end included). A parent that died before the request leaves the child reparented already.
    if (parent_death_signal != 0) {
        if (syscall(SYS_prctl, PR_SET_PDEATHSIG, (unsigned long)parent_death_signal, 0UL, 0UL, 0UL) != 0) { stage = mp_spawn_stage_parent_death; goto failed; }
        if ((pid_t)syscall(SYS_getppid) != parent) { errno = ESRCH; stage = mp_spawn_stage_parent_death; goto failed; }
    }
    // Signal dispositions the parent ignores survive exec; the child starts with the defaults and
    // an empty mask, as posix_spawn with POSIX_SPAWN_SETSIGDEF and SETSIGMASK does.
    for (int signal_number = 1; signal_number < 65; signal_number++) {
        struct mp_kernel_sigaction old;
        if (signal_number == SIGKILL || signal_number == SIGSTOP) continue;
        if (syscall(SYS_rt_sigaction, signal_number, NULL, &old, sizeof(uint64_t)) == 0 && old.handler == SIG_IGN) {
            // Field by field, not memset: a sanitizer's memset interceptor, here in the child of a
            // clone from a busy parent, can wait for a lock another thread held at the clone (under
            // ThreadSanitizer a child hung so when the test process ignored a signal).
            struct mp_kernel_sigaction reset;
            reset.handler = SIG_DFL;
            reset.flags = 0;
            reset.restorer = NULL;
            reset.mask = 0;
            syscall(SYS_rt_sigaction, signal_number, &reset, NULL, sizeof(uint64_t));
        }
    }
    uint64_t empty = 0;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty, NULL, sizeof empty);
    // "0" written to cgroup.procs moves the writer itself, in v1 and v2 alike.
    for (int index = 0; index < cgroup_count; index++) {
        if (syscall(SYS_write, cgroup_procs[index], "0", 1) != 1) { stage = mp_spawn_stage_cgroup; goto failed; }
    }
    if (syscall(SYS_setpgid, 0, 0) != 0) { stage = mp_spawn_stage_process_group; goto failed; }
    if (directory != NULL && syscall(SYS_chdir, directory) != 0) { stage = mp_spawn_stage_directory; goto failed; }
    if (inherited_count > 0) {
        // Move the report pipe and every source above the targets first, so that no dup below
        // lands on one still needed.
        int first_free = 3 + inherited_count;
        int moved_report = (int)syscall(SYS_fcntl, report, F_DUPFD_CLOEXEC, first_free);
        if (moved_report < 0) { stage = mp_spawn_stage_descriptors; goto failed; }
        report = moved_report;
        int moved[64];
        if (inherited_count > 64) { errno = EINVAL; stage = mp_spawn_stage_descriptors; goto failed; }
        for (int index = 0; index < inherited_count; index++) {
            moved[index] = (int)syscall(SYS_fcntl, inherited[index], F_DUPFD_CLOEXEC, first_free);
            if (moved[index] < 0) { stage = mp_spawn_stage_descriptors; goto failed; }
        }
        for (int index = 0; index < inherited_count; index++) {
            // dup3 with no flags leaves the new descriptor without close-on-exec: it survives the
            // exec. (The source, moved above the targets, is never the target, which dup3 refuses.)
            if (syscall(SYS_dup3, moved[index], 3 + index, 0) < 0) { stage = mp_spawn_stage_descriptors; goto failed; }
        }
    }
    // Nothing else of the parent's leaks into the child, whatever its flags (Linux 5.11; older
    // kernels leave descriptors as they are, as posix_spawn does).
    syscall(SYS_close_range, 3 + inherited_count, ~0U, MP_CLOSE_RANGE_CLOEXEC);
    syscall(SYS_execve, path, argv, envp);
    stage = mp_spawn_stage_exec;
failed:;
    int message[2] = { stage, errno };
    long written;
    do { written = syscall(SYS_write, report, message, sizeof message); } while (written < 0 && errno == EINTR);
    syscall(SYS_exit_group, 127);
    __builtin_unreachable();
}

/// Starts `path` with `argv` and `envp` in `directory` (NULL: the parent's), after the child has
/// written "0" to each of the `cgroup_count` open `cgroup.procs` descriptors, with the
/// `inherited_count` (at most 64) `inherited` descriptors as its 3, 4, …, and its 0, 1 and 2 as
/// the parent's, and `parent_death_signal` (0: none) sent to it when the calling thread ends.
/// Returns once the child has exec'd, or has failed and been reaped. `try_clone3` 0
/// goes straight to the fallback (for tests of it).
///
/// clone3 with CLONE_PIDFD (Linux 5.3) makes the child and its pidfd at once; where clone3 is
/// refused (ENOSYS on older kernels, or a seccomp filter that answers ENOSYS or EPERM, as Docker's
/// did) a plain clone with SIGCHLD (fork's semantics, without glibc's atfork handlers, which the
/// child does not need) and pidfd_open follow. Either way the child is a copy of the calling thread
/// alone, which runs only the async-signal-safe steps above.
/// Uninstrumented as the child's side is: after the clone the child goes on in this function.
MP_UNINSTRUMENTED
static inline void mp_spawn(const char *path, char *const argv[], char *const envp[], const char *directory,
                            const int *cgroup_procs, int cgroup_count,
                            const int *inherited, int inherited_count, int parent_death_signal,
                            int try_clone3, mp_spawn_result *result) {
    memset(result, 0, sizeof *result);
    pid_t parent = getpid();
    result->pidfd = -1;
    int report[2];
    if (syscall(SYS_pipe2, report, O_CLOEXEC) != 0) {
        result->stage = mp_spawn_stage_pipe;
        result->error = errno;
        return;
    }
    int pidfd = -1;
    struct mp_clone_args args;
    memset(&args, 0, sizeof args);
    args.flags = MP_CLONE_PIDFD;
    args.pidfd = (uint64_t)(uintptr_t)&pidfd;
    args.exit_signal = SIGCHLD;
    long pid = -1;
    errno = ENOSYS;
    if (try_clone3) pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid < 0 && (errno == ENOSYS || errno == EPERM)) {
        pidfd = -1;
        pid = syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
    } else if (pid >= 0) {
        result->used_clone3 = 1;
    }
    if (pid == 0) {
        syscall(SYS_close, report[0]);  // Raw, as every step of the child (see mp_spawn_child).
        mp_spawn_child(path, argv, envp, directory, cgroup_procs, cgroup_count, inherited, inherited_count,
                       parent_death_signal, parent, report[1]);
    }
    int saved = errno;
    close(report[1]);
    if (pid < 0) {
        close(report[0]);
        result->stage = mp_spawn_stage_fork;
        result->error = saved;
        return;
    }
    if (pidfd < 0) {
        pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
        if (pidfd >= 0) fcntl(pidfd, F_SETFD, FD_CLOEXEC);
    }
    // The report pipe closes at exec (close-on-exec) or carries the failure.
    int message[2] = { 0, 0 };
    ssize_t count;
    do { count = read(report[0], message, sizeof message); } while (count < 0 && errno == EINTR);
    close(report[0]);
    result->pid = (pid_t)pid;
    result->pidfd = pidfd;
    if (count == (ssize_t)sizeof message) {
        result->stage = message[0];
        result->error = message[1];
        int status;
        while (waitpid((pid_t)pid, &status, 0) < 0 && errno == EINTR) {}
        if (pidfd >= 0) close(pidfd);
        result->pid = 0;
        result->pidfd = -1;
    }
}

/// How a reaped child ended.
typedef enum {
    mp_child_running = 0,
    mp_child_exited = 1,
    mp_child_killed = 2,
    mp_child_dumped = 3,
} mp_child_outcome;

/// Reaps the child if it has ended (waitid with P_PIDFD when `pidfd` >= 0, else P_PID): returns
/// its outcome and sets `status` to the exit status or the signal; mp_child_running when it runs
/// on (only with `block` 0); -errno on failure.
static inline int mp_reap_child(int pidfd, pid_t pid, int block, int *status) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    int options = WEXITED | (block ? 0 : WNOHANG);
    int result;
    do {
        result = pidfd >= 0 ? waitid((idtype_t)3 /* P_PIDFD */, (id_t)pidfd, &info, options)
                            : waitid(P_PID, (id_t)pid, &info, options);
    } while (result < 0 && errno == EINTR);
    if (result < 0) return -errno;
    if (info.si_pid == 0) return mp_child_running;
    *status = info.si_status;
    switch (info.si_code) {
    case CLD_EXITED: return mp_child_exited;
    case CLD_DUMPED: return mp_child_dumped;
    default: return mp_child_killed;
    }
}

/// pidfd_send_signal(2) (Linux 5.1): 0 or -errno.
static inline int mp_pidfd_send_signal(int pidfd, int signal_number) {
    return syscall(SYS_pidfd_send_signal, pidfd, signal_number, NULL, 0) == 0 ? 0 : -errno;
}

/// process_mrelease(2) (Linux 5.15): reaps a dying process's memory now; 0 or -errno.
static inline int mp_process_mrelease(int pidfd) {
    return syscall(SYS_process_mrelease, pidfd, 0) == 0 ? 0 : -errno;
}

/// process_madvise(2) (Linux 5.10): gives `advice` (MADV_PAGEOUT, 21) for `count` ranges of the
/// process `pidfd` names, at most IOV_MAX at once; the bytes advised, or -errno.
static inline long mp_process_madvise(int pidfd, const struct iovec *ranges, size_t count, int advice) {
    long result = syscall(SYS_process_madvise, pidfd, ranges, count, advice, 0U);
    return result >= 0 ? result : -errno;
}

/// Waits up to `milliseconds` (-1: no limit) for `descriptor` to report `events`; returns poll's
/// revents, 0 on timeout, or -errno.
static inline int mp_poll_one(int descriptor, short events, int milliseconds) {
    struct pollfd entry = { descriptor, events, 0 };
    int result = poll(&entry, 1, milliseconds);
    if (result < 0) return -errno;
    return result == 0 ? 0 : entry.revents;
}
#endif

#endif
