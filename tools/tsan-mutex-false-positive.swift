// Evidence for Tests/SanitizerSupport/MutexHandover.c, run by tools/ci-sanitizers. Four threads
// count to 20,000 each (or to the second argument), through a method of the guarded state (so the accesses ThreadSanitizer
// judges are a frame below the closure passed to withLock, as in the library).
//
//   mutex   under Synchronization.Mutex: the total is exact, so the lock works. Built alone,
//           ThreadSanitizer still reports a race when the lock was contended (the contended path is
//           not instrumented); built with MutexHandover.c, or with it preloaded, it reports none.
//   pthread under a pthread mutex, which ThreadSanitizer intercepts: exact and no report.
//   racy    with no lock: a real race, which ThreadSanitizer must report in every build.
//
// Usage: tsan-mutex-false-positive [mutex|pthread|racy] [ITERATIONS]. Prints "<mode> total <n> expected <m>".
import Glibc
import Synchronization

struct Tally {
    var count = 0

    mutating func increment() {
        count += 1
    }
}

final class UnguardedTally: @unchecked Sendable {
    var tally = Tally()
    var mutex = pthread_mutex_t()
}

let mode = CommandLine.arguments.dropFirst().first ?? "mutex"
let guarded = Mutex(Tally())
let unguarded = UnguardedTally()
pthread_mutex_init(&unguarded.mutex, nil)
let iterations = CommandLine.arguments.dropFirst(2).first.flatMap { Int($0) } ?? 20_000
let threadCount = 4

func work() {
    for _ in 0..<iterations {
        switch mode {
        case "pthread":
            pthread_mutex_lock(&unguarded.mutex)
            unguarded.tally.increment()
            pthread_mutex_unlock(&unguarded.mutex)
        case "racy":
            unguarded.tally.increment()
        default:
            guarded.withLock { $0.increment() }
        }
    }
}

var threads: [pthread_t] = []
for _ in 0..<threadCount {
    var thread = pthread_t()
    pthread_create(&thread, nil, { _ in
        work()
        return nil
    }, nil)
    threads.append(thread)
}
for thread in threads {
    pthread_join(thread, nil)
}
let total = mode == "mutex" ? guarded.withLock { $0.count } : unguarded.tally.count
print("\(mode) total \(total) expected \(threadCount * iterations)")
