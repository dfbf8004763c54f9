// Evidence for the ThreadSanitizer suppressions in Tests/SanitizerSupport/SanitizerRuntime.c, run by
// tools/ci-sanitizers. Four threads add 1 to a counter 20,000 times each.
//
//   mutex   under Synchronization.Mutex: the total is exact, so the lock works; ThreadSanitizer
//           still reports a race when the lock was contended (its slow path is not instrumented).
//   pthread under a pthread mutex, which ThreadSanitizer intercepts: exact and no report.
//   racy    with no lock: a real race, which the suppressions must not hide.
//
// Prints "<mode> total <n> expected <m>".
import Glibc
import Synchronization

final class Counter: @unchecked Sendable {
    var count = 0
    var mutex = pthread_mutex_t()
}

let mode = CommandLine.arguments.dropFirst().first ?? "mutex"
let guarded = Mutex(0)
let counter = Counter()
pthread_mutex_init(&counter.mutex, nil)
let iterations = 20_000
let threadCount = 4

func work() {
    for _ in 0..<iterations {
        switch mode {
        case "pthread":
            pthread_mutex_lock(&counter.mutex)
            counter.count += 1
            pthread_mutex_unlock(&counter.mutex)
        case "racy":
            counter.count += 1
        default:
            guarded.withLock { $0 += 1 }
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
let total = mode == "mutex" ? guarded.withLock { $0 } : counter.count
print("\(mode) total \(total) expected \(threadCount * iterations)")
