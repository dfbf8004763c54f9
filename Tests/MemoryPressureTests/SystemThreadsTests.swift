#if canImport(Glibc)
import Glibc
#endif
import Dispatch
@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import SystemPackage
import Testing

/// The threads of a memory system are its own, as swift-nio's event loops are their group's: the
/// apps' run-loop workers, the deadline timers', the monitor's and the reclamation thread end with
/// `shutDown()` and the system's release (issue 36: the first two were process-wide and never
/// stopped).
struct SystemThreadsTests {
    /// The threads found so far, by kernel id.
    final class SeenThreads: Sendable {
        private let tasks = Mutex<Set<pid_t>>([])
        func note() {
            guard let task = PosixThread.currentTaskIdentifier else { return }
            tasks.withLock { _ = $0.insert(task) }
        }
        var all: Set<pid_t> { tasks.withLock { $0 } }
    }

    static func isAlive(_ task: pid_t) -> Bool {
        access("/proc/self/task/\(task)", F_OK) == 0
    }

    @Test func noThreadOfTheSystemIsLeftAfterShutDownAndRelease() async throws {
        let seen = SeenThreads()
        var system: MemorySystem? = try MemorySystem(configuration: .test(targetBytes: 1 << 33, logger: silentLogger))
        weak let released = system
        try await {
            let system = try #require(system)
            // The monitor's thread, from its observer.
            let monitored = system.monitor.events.observe { _ in seen.note() }
            defer { monitored.cancel() }
            let apps = try (0..<4).map { index in
                try system.register(.test("app-\(index)"), configuration: .patient()) {
                    let delegate = RecordingDelegate()
                    delegate.onMemoryWarning = { _, _ in seen.note() }
                    return delegate
                }
            }
            try await system.running {
                #expect(await eventually { !seen.all.isEmpty })
                for app in apps {
                    try await app.launch()
                    // A callback on a run-loop worker.
                    try await app.perform { _ in seen.note() }
                }
                // A deadline's action on the timers' thread.
                let fired = SharedBox(false)
                system.threads.timers.schedule(at: .now) {
                    seen.note()
                    fired.value = true
                }
                #expect(await eventually { fired.value })
                _ = await MemoryWarning(level: .warning).deliver(to: apps, timeout: .seconds(30)) { _ in 0 }
                for app in apps.prefix(2) { try await app.enterBackground() }
            }
            await system.shutDown()
            #expect(system.threads.pool.workerCount == 0, "every worker ended with the shutdown")
        }()
        system = nil
        #expect(released == nil, "the system is released")
        let threads = seen.all
        #expect(threads.count >= 3, "a worker, the timers' thread and the monitor's were seen: \(threads)")
        let left = threads.filter(Self.isAlive)
        #expect(left.isEmpty, "threads of the system still alive: \(left)")
    }

    /// Workers added past a blocked callback that retired on their own are gone once their group
    /// shuts down: each is joined by the next to retire or by the shut-down, never left detached
    /// and still exiting (a fresh-clone CI run once found one alive after the system had gone).
    @Test func workersThatRetiredOnTheirOwnAreGoneAfterTheShutDown() async throws {
        let group = AppThreadGroup(baseWorkers: 1, maximumWorkers: 3, retireAfter: .milliseconds(1))
        let seen = SeenThreads()
        let gate = DispatchSemaphore(value: 0)
        let blocked = AppRunLoop(pool: group.pool)
        blocked.perform {
            seen.note()
            gate.wait()
        }
        // The base worker is blocked, so each item runs on an added worker, which retires a
        // millisecond after it: one item after another, several retire.
        let ran = DispatchSemaphore(value: 0)
        do {
            defer {
                gate.signal()
                group.shutDown()
            }
            for _ in 0..<5 {
                AppRunLoop(pool: group.pool).perform {
                    seen.note()
                    ran.signal()
                }
                let outcome = await blockingWait { ran.wait(timeout: .now() + .seconds(20)) }
                try #require(outcome == .success)
                #expect(await eventually { group.pool.workerCount == 1 }, "the added worker retired")
            }
        }
        #expect(seen.all.count >= 2, "the base worker and at least one added one: \(seen.all)")
        let left = seen.all.filter(Self.isAlive)
        #expect(left.isEmpty, "workers still alive after the shut-down: \(left)")
    }

    /// The threads start again when the system is used after its shutdown.
    @Test func aSystemUsedAfterItsShutdownStartsItsThreadsAgain() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33, logger: silentLogger))
        let app = try system.register(.test("again"), configuration: .patient()) { RecordingDelegate() }
        try await app.launch()
        await system.shutDown()
        #expect(system.threads.pool.workerCount == 0)
        #expect(try await app.launch() == .active)
        #expect(try await app.enterBackground() == .suspended)
        await system.shutDown()
    }
}
