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
import Testing

/// Reading an app's state never waits, whatever lock the reader holds.
@Suite(.timeLimit(.minutes(1)))
struct AppStateReadingTests {
    /// Discardable content whose discard callback, run under its cache's lock, reads its app's state.
    final class StateReadingContent: DiscardableContent {
        let onDiscard: @Sendable () -> Void
        private let access = ContentAccessCount()

        init(onDiscard: @escaping @Sendable () -> Void) {
            self.onDiscard = onDiscard
        }

        func beginContentAccess() -> Bool { access.begin() }
        func endContentAccess() { access.end() }
        func discardContentIfPossible() {
            onDiscard()
            access.discardIfPossible()
        }
        var isContentDiscarded: Bool { access.isDiscarded }
    }

    /// The termination of a hosted app reads its caches' costs (its footprint), while a purge may be
    /// running the app's discard callback under a cache's lock: a callback that reads the app's
    /// state must not wait for the termination. The termination reads them with the app's lock
    /// released (its bookkeeping runs after the lock), so the callback finds the lock free.
    @Test func aDiscardCallbackReadsItsAppsStateWhileTheAppIsTerminated() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 30, logger: silentLogger))
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        let read = SharedLog<AppState>()
        let cache = SharedBox<PurgeableCache<Int, StateReadingContent>?>(nil)
        let app = try system.register(.test("reader"), configuration: .patient()) { IdleDelegate() }
        let content = StateReadingContent {
            entered.signal()
            _ = gate.wait(timeout: .now() + 60)
            read.append(app.state)
        }
        cache.value = try PurgeableCache(name: "contents", owner: app.identifier, category: .images)
        let contents = try #require(cache.value)
        try contents.setValue(content, forKey: 1, cost: 1)
        system.register(contents)
        try await app.launch()

        let purged = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = contents.purge(for: .critical)
            purged.signal()
        }
        #expect(await LifecycleContractTests.wait(for: entered))
        // The termination's bookkeeping is about to read the cache's costs, and so to wait for its
        // lock: it says so first.
        let draining = DispatchSemaphore(value: 0)
        let drainingObservation = system.terminator.drainingBegins.observe { terminated in
            if terminated == app.identifier { draining.signal() }
        }
        defer { drainingObservation.cancel() }
        async let termination = app.terminate(reason: .explicit)
        // The termination has moved the app and waits for the cache's lock, not holding the app's.
        #expect(await eventually { app.systemState == .notRunning })
        #expect(await LifecycleContractTests.wait(for: draining))
        #expect(app.record.withLockIfAvailable { _ in } != nil)
        gate.signal()
        #expect(await LifecycleContractTests.wait(for: purged))
        #expect(try await termination == .notRunning)
        // The termination has moved the app (and published it) before it reports it.
        #expect(read.all == [.notRunning])
        #expect(contents.count == 0)
    }

    /// A deadline termination whose bookkeeping waits for a cache's lock, held by a discard callback
    /// of the app's own, holds up no other deadline of the process: the timer thread hands the
    /// termination's events to a task.
    @Test func aTerminationWaitingForACacheDoesNotHoldUpOtherDeadlines() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 30, logger: silentLogger))
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        // Overruns its 100 ms deadline until the test ends, so the timer terminates the app however
        // late its thread runs: a fixed overrun (it slept 400 ms) ended first when a loaded machine
        // under ThreadSanitizer ran the timer's thread late, and the app was never terminated.
        let overrun = DispatchSemaphore(value: 0)
        defer { overrun.signal() }
        let app = try system.register(.test("overrunning"), configuration: .quick) {
            let delegate = RecordingDelegate()
            delegate.onDidEnterBackground = { _ in _ = overrun.wait(timeout: .now() + 120) }
            return delegate
        }
        let contents = try PurgeableCache<Int, StateReadingContent>(name: "contents", owner: app.identifier, category: .images)
        try contents.setValue(StateReadingContent { entered.signal(); _ = gate.wait(timeout: .now() + 60) }, forKey: 1, cost: 1)
        system.register(contents)
        try await app.launch()
        DispatchQueue.global().async { _ = contents.purge(for: .critical) }
        #expect(await LifecycleContractTests.wait(for: entered))
        async let entering = app.enterBackground()
        #expect(await eventually { app.systemState == .notRunning })
        // The termination's bookkeeping now waits for the cache; another deadline still runs.
        let ran = SharedBox(false)
        system.threads.timers.schedule(at: .now + .milliseconds(50)) { ran.value = true }
        #expect(await eventually(within: .seconds(10)) { ran.value })
        gate.signal()
        #expect(try await entering == .notRunning)
    }
}
