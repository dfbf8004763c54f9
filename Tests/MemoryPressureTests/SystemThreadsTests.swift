#if canImport(Glibc)
import Glibc
#endif
@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
import MemoryPressureTestKit
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
                try system.register(.test("app-\(index)"), configuration: .quick) {
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

    /// The threads start again when the system is used after its shutdown.
    @Test func aSystemUsedAfterItsShutdownStartsItsThreadsAgain() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33, logger: silentLogger))
        let app = try system.register(.test("again"), configuration: .quick) { RecordingDelegate() }
        try await app.launch()
        await system.shutDown()
        #expect(system.threads.pool.workerCount == 0)
        #expect(try await app.launch() == .active)
        #expect(try await app.enterBackground() == .suspended)
        await system.shutDown()
    }
}
