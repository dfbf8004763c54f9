// What a pass costs right after a 10 ms wait on this machine, against the same work done again at
// once (warm): a `pread` of /proc/self/statm, and calls to N functions that each lie on a page of
// their own (the monitor's pass touches its code that way). 300 passes; prints the mean of each.
// Usage: cc -O2 tools/cold-pass.c -o /tmp/cold-pass && /tmp/cold-pass 50   (N: 1 to 200)
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

#define PAGE_FUNCTION(i) __attribute__((noinline, aligned(4096))) static void f##i(void) { sink += i; }
#define TEN(d) PAGE_FUNCTION(d##0) PAGE_FUNCTION(d##1) PAGE_FUNCTION(d##2) PAGE_FUNCTION(d##3) PAGE_FUNCTION(d##4) \
    PAGE_FUNCTION(d##5) PAGE_FUNCTION(d##6) PAGE_FUNCTION(d##7) PAGE_FUNCTION(d##8) PAGE_FUNCTION(d##9)
TEN(1) TEN(2) TEN(3) TEN(4) TEN(5) TEN(6) TEN(7) TEN(8) TEN(9) TEN(10)
TEN(11) TEN(12) TEN(13) TEN(14) TEN(15) TEN(16) TEN(17) TEN(18) TEN(19) TEN(20)
#define REF(d) f##d##0, f##d##1, f##d##2, f##d##3, f##d##4, f##d##5, f##d##6, f##d##7, f##d##8, f##d##9
static void (*const functions[200])(void) = {
    REF(1), REF(2), REF(3), REF(4), REF(5), REF(6), REF(7), REF(8), REF(9), REF(10),
    REF(11), REF(12), REF(13), REF(14), REF(15), REF(16), REF(17), REF(18), REF(19), REF(20),
};

static long nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000L + now.tv_nsec;
}

int main(int argc, char **argv) {
    int count = argc > 1 ? atoi(argv[1]) : 50;
    if (count < 1 || count > 200) {
        fprintf(stderr, "cold-pass: N must be 1 to 200, not %s\n", argv[1]);
        return 2;
    }
    int statm = open("/proc/self/statm", O_RDONLY);
    if (statm < 0) { perror("cold-pass: /proc/self/statm"); return 1; }
    char buffer[160];
    const int passes = 300;
    long statmCold = 0, statmWarm = 0, callsCold = 0, callsWarm = 0;
    for (int pass = 0; pass < passes; pass++) {
        poll(NULL, 0, 10);
        long a = nanoseconds();
        pread(statm, buffer, sizeof buffer, 0);
        long b = nanoseconds();
        pread(statm, buffer, sizeof buffer, 0);
        long c = nanoseconds();
        statmCold += b - a;
        statmWarm += c - b;
        poll(NULL, 0, 10);
        a = nanoseconds();
        for (int i = 0; i < count; i++) functions[i]();
        b = nanoseconds();
        for (int i = 0; i < count; i++) functions[i]();
        c = nanoseconds();
        callsCold += b - a;
        callsWarm += c - b;
    }
    printf("statm pread: cold %ld ns, warm %ld ns\n", statmCold / passes, statmWarm / passes);
    printf("%d functions on pages of their own: cold %ld ns, warm %ld ns\n", count, callsCold / passes, callsWarm / passes);
    return 0;
}
