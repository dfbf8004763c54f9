// The cost of waking every 10 ms on this machine, before any work: three threads for 5 s, one in
// `poll`, one in `epoll_wait` on a pipe, one in `epoll_wait` that also reads /proc/self/statm with
// `pread` each pass (the monitor's kernel work under pressure, with none of its Swift code). Prints
// each thread's CPU in ns per second, from /proc/self/task/TID/schedstat, as the Sampling suite's
// `monitor-CPU-per-second-under-pressure` measures the monitor and its `poll` floor.
// Usage: cc -O2 -pthread tools/wakeup-floor.c -o /tmp/wakeup-floor && /tmp/wakeup-floor
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int stop = 0;
static long tids[3];
static const char *names[3] = {"poll", "epoll", "epoll+statm"};

/// An epoll set holding the read end of a new pipe, as the monitor's holds its wake pipe.
static int epoll_on_a_pipe(void) {
    int set = epoll_create1(0);
    int ends[2];
    if (set < 0 || pipe(ends) != 0) return -1;
    struct epoll_event event = {.events = EPOLLIN, .data.fd = ends[0]};
    epoll_ctl(set, EPOLL_CTL_ADD, ends[0], &event);
    return set;
}

static void *in_poll(void *unused __attribute__((unused))) {
    tids[0] = syscall(SYS_gettid);
    while (!stop) poll(NULL, 0, 10);
    return NULL;
}

static void *in_epoll(void *unused __attribute__((unused))) {
    tids[1] = syscall(SYS_gettid);
    int set = epoll_on_a_pipe();
    struct epoll_event ready[4];
    while (!stop) epoll_wait(set, ready, 4, 10);
    return NULL;
}

static void *in_epoll_reading_statm(void *unused __attribute__((unused))) {
    tids[2] = syscall(SYS_gettid);
    int set = epoll_on_a_pipe();
    int statm = open("/proc/self/statm", O_RDONLY);
    char text[160];
    struct epoll_event ready[4];
    while (!stop) {
        if (pread(statm, text, sizeof text, 0) < 0) break;
        epoll_wait(set, ready, 4, 10);
    }
    return NULL;
}

/// The thread's time on a processor so far, in ns.
static long cpu_ns(long tid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", tid);
    FILE *file = fopen(path, "r");
    long ns = 0;
    if (file == NULL || fscanf(file, "%ld", &ns) != 1) ns = -1;
    if (file != NULL) fclose(file);
    return ns;
}

int main(void) {
    void *(*bodies[3])(void *) = {in_poll, in_epoll, in_epoll_reading_statm};
    pthread_t threads[3];
    for (int i = 0; i < 3; i++) pthread_create(&threads[i], NULL, bodies[i], NULL);
    sleep(1);
    long start[3];
    for (int i = 0; i < 3; i++) start[i] = cpu_ns(tids[i]);
    sleep(5);
    for (int i = 0; i < 3; i++) printf("%s %ld ns per s\n", names[i], (cpu_ns(tids[i]) - start[i]) / 5);
    stop = 1;
    for (int i = 0; i < 3; i++) pthread_join(threads[i], NULL);
    return 0;
}
