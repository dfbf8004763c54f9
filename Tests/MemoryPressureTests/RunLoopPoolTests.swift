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
import Synchronization
import Testing

/// The apps' run loops on a bounded pool of threads: serial per app, bounded in threads, and going
/// on past a blocked callback.
@Suite struct RunLoopPoolTests {
    @Test func eachRunLoopRunsItsWorkAloneAndInOrderOnAPoolThatStaysWithinItsBound() async throws {
        let group = AppThreadGroup(baseWorkers: 2, maximumWorkers: 4)
        defer { group.shutDown() }
        let pool = group.pool
        let runLoops = (0..<2_000).map { _ in AppRunLoop(pool: pool) }
        let logs = runLoops.map { _ in SharedLog<Int>() }
        let inside = runLoops.map { _ in SharedBox(false) }
        let overlaps = Atomic<Int>(0)
        let peakWorkers = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        for item in 0..<20 {
            for (index, runLoop) in runLoops.enumerated() {
                runLoop.perform {
                    if inside[index].update({ entered in defer { entered = true }; return entered }) {
                        overlaps.add(1, ordering: .relaxed)
                    }
                    logs[index].append(item)
                    peakWorkers.max(pool.workerCount, ordering: .relaxed)
                    inside[index].value = false
                    done.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(await eventually { done.load(ordering: .relaxed) == 40_000 })
        #expect(overlaps.load(ordering: .relaxed) == 0)
        #expect(logs.allSatisfy { $0.all == Array(0..<20) })
        #expect(peakWorkers.load(ordering: .relaxed) <= 4)
    }

    @Test func blockedRunLoopsHoldAWorkerEachAndThePoolGrowsPastThemToItsBound() async throws {
        // Added workers stay for the whole test: with the default two seconds, a worker that ran the
        // free run loop could retire before a slow look at the count (a busy machine delays a
        // sleeping test task by that much), and the count would read one less than the pool grew.
        // The watchdog looks, and the turns it judges are timed, on a clock the test steps: the
        // pool grows at stepped looks only.
        let clock = ManualClock()
        let group = AppThreadGroup(baseWorkers: 2, maximumWorkers: 4, retireAfter: .seconds(3_600), clock: clock)
        defer { group.shutDown() }
        let pool = group.pool
        /// Steps the watchdog's looks until `condition` holds (at most a hundred looks).
        func stepLooks(until condition: () -> Bool) async -> Bool {
            for _ in 0..<100 where !condition() {
                clock.step(by: pool.lookInterval)
                guard await group.timers.haveLookedAtTheTimeNow() else { return false }
            }
            return condition()
        }
        let gate = DispatchSemaphore(value: 0)
        let blocked = Atomic<Int>(0)
        // Three blocked run loops: more than the base, fewer than the bound.
        for _ in 0..<3 {
            AppRunLoop(pool: pool).perform {
                blocked.add(1, ordering: .relaxed)
                gate.wait()
            }
        }
        #expect(await eventually { blocked.load(ordering: .relaxed) == 2 })
        #expect(await stepLooks { pool.workerCount == 3 })
        #expect(await eventually { blocked.load(ordering: .relaxed) == 3 })
        let ran = Atomic<Bool>(false)
        AppRunLoop(pool: pool).perform { ran.store(true, ordering: .relaxed) }
        #expect(await stepLooks { pool.workerCount == 4 })
        #expect(await eventually { ran.load(ordering: .relaxed) == true })
        #expect(pool.workerCount == 4)

        // A fourth blocks the last worker the bound allows: the next run loop waits for one.
        AppRunLoop(pool: pool).perform {
            blocked.add(1, ordering: .relaxed)
            gate.wait()
        }
        #expect(await eventually { blocked.load(ordering: .relaxed) == 4 })
        let waited = Atomic<Bool>(false)
        AppRunLoop(pool: pool).perform { waited.store(true, ordering: .relaxed) }
        // Fifty looks of the watchdog, well past the stall threshold of every turn: at that
        // instant, no fifth worker, and the run loop still waits.
        for _ in 0..<50 {
            clock.step(by: pool.lookInterval)
            #expect(await group.timers.haveLookedAtTheTimeNow())
        }
        let waitedWhileAllBlocked = waited.load(ordering: .relaxed)
        #expect(!waitedWhileAllBlocked)
        #expect(pool.workerCount == 4)
        gate.signal()
        #expect(await eventually { waited.load(ordering: .relaxed) == true })
        for _ in 0..<3 { gate.signal() }
    }

    @Test func workersBeyondTheBaseRetireWithoutStrandingWorkScheduledAsTheyLeave() async throws {
        // Two blocked run loops hold the base workers, so every other item needs an added worker,
        // and added workers retire after a millisecond without work: items scheduled one by one
        // keep landing as a worker times out. None may be left waiting for a blocked worker.
        let group = AppThreadGroup(baseWorkers: 2, maximumWorkers: 4, retireAfter: .milliseconds(1))
        defer { group.shutDown() }
        let pool = group.pool
        let gate = DispatchSemaphore(value: 0)
        defer { for _ in 0..<2 { gate.signal() } }
        let blocked = Atomic<Int>(0)
        for _ in 0..<2 {
            AppRunLoop(pool: pool).perform {
                blocked.add(1, ordering: .relaxed)
                gate.wait()
            }
        }
        #expect(await eventually { blocked.load(ordering: .relaxed) == 2 })
        let ran = DispatchSemaphore(value: 0)
        for round in 1...300 {
            AppRunLoop(pool: pool).perform { ran.signal() }
            // A stranded item waits for ever; the limit only ends the test.
            let outcome = ran.wait(timeout: .now() + .seconds(20))
            #expect(outcome == .success, "item \(round) ran")
            guard outcome == .success else { break }
            // About as long as the worker that ran it waits before it retires: that wait is timed
            // by the kernel, and landing items across its end is the subject, so a fixed sleep.
            usleep(UInt32.random(in: 500...1_500))
        }
        #expect(await eventually { pool.workerCount == 2 })
    }

    @Test func appsGoOnWhileMoreAppsThanTheBaseWorkersAreBlockedInACallback() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33))
        let gate = DispatchSemaphore(value: 0)
        defer { for _ in 0...system.threads.pool.baseWorkers { gate.signal() } }
        let blocked = Atomic<Int>(0)
        // One more blocked app than the pool keeps workers for.
        for index in 0...system.threads.pool.baseWorkers {
            let app = try system.register(.test("blocked-\(index)")) { RecordingDelegate() }
            try await app.launch()
            app.enqueue { _ in
                blocked.add(1, ordering: .relaxed)
                gate.wait()
            }
        }
        #expect(await eventually { blocked.load(ordering: .relaxed) == system.threads.pool.baseWorkers + 1 })
        let log = SharedLog<String>()
        let free = try system.register(.test("free")) { RecordingDelegate(log: log) }
        #expect(try await free.launch() == .active)
        #expect(try await free.enterBackground() == .suspended)
        #expect(log.all == ["willFinishLaunching", "didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground"])
    }

    @Test func aWarningToTwoThousandAppsAddsAtMostThePoolsBoundInThreads() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33))
        let warned = Atomic<Int>(0)
        let apps = try (0..<2_000).map { index in
            try system.register(.test("tenant-\(index)")) {
                let delegate = RecordingDelegate()
                delegate.onMemoryWarning = { _, _ in warned.add(1, ordering: .relaxed) }
                return delegate
            }
        }
        for app in apps { try await app.launch() }
        let before = processThreadCount()
        let peak = PeakThreadCount()
        let delivery = await MemoryWarning(level: .warning).deliver(to: apps, timeout: .seconds(30)) { _ in 0 }
        let most = await peak.stop()

        #expect(delivery.appsReached == 2_000 && warned.load(ordering: .relaxed) == 2_000)
        // One DispatchQueue per app took the process from about 10 threads to 259 here. The pool
        // adds at most its bound (reached only with that many callbacks blocked), and the deadline
        // timers' thread, where its watchdog looks, may start.
        #expect(most - before <= system.threads.pool.maximumWorkers + 1)
        #expect(system.threads.pool.workerCount <= system.threads.pool.maximumWorkers)
    }
}
