import Dispatch
import Jemalloc
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

/// Faults injected into apps and into the sources of the figures: each test shows the faulty part
/// handled (terminated, skipped, logged once) and the rest of the system still working.
// The limit only stops a hung test. It counts the wait for `.exclusiveMemoryUse`, which under
// ThreadSanitizer, behind the suites that move hundreds of MiB, passed a minute on a loaded machine.
@Suite(.timeLimit(.minutes(5)))
struct FaultInjectionTests {
    /// The threads of the suite's apps, which no memory system hosts: one group for them all.
    static let threads = AppThreadGroup.forTheProcessLifetime()

    static func app(_ name: String, log: SharedLog<String>, configuration: AppConfiguration = .default, events: EventSource<LifecycleEvent>? = nil,
                    onDidEnterBackground: (@Sendable (isolated App) -> Void)? = nil,
                    onWillTerminate: (@Sendable (isolated App) -> Void)? = nil) throws -> App {
        let delegate = RecordingDelegate.recordingNotifications(in: log)
        delegate.onDidEnterBackground = onDidEnterBackground
        delegate.onWillTerminate = onWillTerminate
        return App(identifier: try AppIdentifier(name), delegate: delegate, configuration: configuration, events: events, threads: threads)
    }

    /// Waits, off the cooperative pool, until `semaphore` is signalled.
    static func wait(for semaphore: DispatchSemaphore) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                semaphore.wait()
                continuation.resume()
            }
        }
    }

    // MARK: Apps

    @Test func overrunningDeadlinesTerminateOnlyTheSlowAppsWhileOthersCarryOn() async throws {
        let gate = DispatchSemaphore(value: 0)
        let healthyLog = SharedLog<String>()
        let slowSave = try Self.app("slow-save", log: SharedLog(), configuration: .quick, onDidEnterBackground: { _ in gate.wait() })
        let slowExit = try Self.app("slow-exit", log: SharedLog(), configuration: .quick, onWillTerminate: { _ in gate.wait() })
        let healthy = try Self.app("healthy", log: healthyLog)
        for app in [slowSave, slowExit, healthy] { try await app.launch() }

        #expect(try await slowSave.enterBackground() == .notRunning)
        #expect(try await slowExit.terminate(reason: .explicit) == .notRunning)
        #expect(slowSave.terminationReason == .deadline)
        #expect(slowExit.terminationReason == .deadline)

        // Both slow apps' run loops are still blocked; the healthy app goes through everything.
        _ = healthyLog.take()
        try await healthy.deactivate()
        try await healthy.enterBackground()
        try await healthy.enterForeground()
        let delivery = await MemoryWarning(level: .critical).deliver(to: [slowSave, slowExit, healthy]) { _ in 0 }
        #expect(delivery.order == [healthy.identifier])
        #expect(healthyLog.take() == [
            "willResignActive", "didEnterBackground", "willEnterForeground", "didBecomeActive",
            "didReceiveMemoryWarning", "notification didReceiveMemoryWarning",
        ])

        // Once the overrunning callbacks return, the slow apps launch again as usual.
        gate.signal()
        gate.signal()
        #expect(try await slowSave.launch() == .active)
        #expect(try await slowExit.launch() == .active)
        for app in [slowSave, slowExit, healthy] { try await app.terminate(reason: .explicit) }
    }

    @Test func aBackgroundTaskNeverEndedTerminatesItsAppAloneAfterItsExpirationHandler() async throws {
        let events = EventSource<LifecycleEvent>()
        let stream = events.stream()
        let expirations = Atomic<Int>(0)
        let healthyTask = Mutex<BackgroundTaskIdentifier?>(nil)
        let forgetful = try Self.app("forgetful", log: SharedLog(), configuration: .quickWithTimeForExpirationHandlers, events: events, onDidEnterBackground: { app in
            _ = try? app.beginBackgroundTask { _ in expirations.add(1, ordering: .relaxed) }
        })
        let healthy = try Self.app("tidy", log: SharedLog(), events: events, onDidEnterBackground: { app in
            healthyTask.withLock { $0 = try? app.beginBackgroundTask { _ in } }
        })
        for app in [forgetful, healthy] { try await app.launch() }
        #expect(try await forgetful.enterBackground() == .background)
        #expect(try await healthy.enterBackground() == .background)

        let terminated = await stream.first { if case .terminated = $0 { true } else { false } }
        #expect(terminated == .terminated(app: forgetful.identifier, reason: .backgroundTaskExpired, state: .background))
        #expect(expirations.load(ordering: .relaxed) == 1)

        // The healthy app's task is untouched: ending it suspends the app, which comes back.
        #expect(healthy.state == .background)
        try healthy.endBackgroundTask(try #require(healthyTask.withLock { $0 }))
        #expect(healthy.state == .suspended)
        #expect(try await healthy.enterForeground() == .active)
        try await healthy.terminate(reason: .explicit)
    }

    @Test func anObserverBlockingDuringAWarningHoldsUpOnlyItsOwnApp() async throws {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let healthyHeard = DispatchSemaphore(value: 0)
        let blocked = try Self.app("blocked", log: SharedLog())
        let healthy = try Self.app("healthy", log: SharedLog())
        for app in [blocked, healthy] { try await app.launch() }
        blocked.notificationCenter.addObserver(forName: .didReceiveMemoryWarning) { _, _ in
            entered.signal()
            release.wait()
        }
        healthy.notificationCenter.addObserver(forName: .didReceiveMemoryWarning) { _, _ in healthyHeard.signal() }

        async let delivery = MemoryWarning(level: .critical).deliver(to: [blocked, healthy]) { _ in 0 }
        await Self.wait(for: entered)
        await Self.wait(for: healthyHeard)
        // The healthy app finished its part and still moves while the blocked observer holds its own app.
        #expect(try await healthy.deactivate() == .inactive)
        #expect(blocked.state == .active)
        release.signal()
        let finished = await delivery
        #expect(finished.appsReached == 2)
        // Each app: its logging observer and the test's observer.
        #expect(finished.observersReached == 4)
        for app in [blocked, healthy] { try await app.terminate(reason: .explicit) }
    }

    @Test func observersRemovingThemselvesAndOthersOrAddingOnesDuringAWarning() async throws {
        let log = SharedLog<String>()
        let app = try Self.app("observers", log: log)
        try await app.launch()
        let center = app.notificationCenter
        let tokens = Mutex<[String: ObservationToken]>([:])
        @Sendable func observe(_ name: String, _ action: @escaping @Sendable (isolated App) -> Void = { _ in }) {
            let token = center.addObserver(forName: .didReceiveMemoryWarning) { app, _ in
                log.append(name)
                action(app)
            }
            tokens.withLock { $0[name] = token }
        }
        observe("removes itself") { app in
            if let token = tokens.withLock({ $0["removes itself"] }) { app.notificationCenter.removeObserver(token) }
        }
        observe("removes the next") { app in
            if let token = tokens.withLock({ $0["removed"] }) { app.notificationCenter.removeObserver(token) }
        }
        observe("removed")
        observe("adds one") { _ in
            if tokens.withLock({ $0["added"] }) == nil { observe("added") }
        }
        _ = log.take()

        let first = await MemoryWarning(level: .warning).deliver(to: [app]) { _ in 0 }
        #expect(log.take() == [
            "didReceiveMemoryWarning", "notification didReceiveMemoryWarning", "removes itself", "removes the next", "adds one",
        ])
        #expect(first.observersReached == 4)
        let second = await MemoryWarning(level: .warning).deliver(to: [app]) { _ in 0 }
        #expect(log.take() == [
            "didReceiveMemoryWarning", "notification didReceiveMemoryWarning", "removes the next", "adds one", "added",
        ])
        #expect(second.observersReached == 4)
        try await app.terminate(reason: .explicit)
    }

    // MARK: Sources of the figures

    /// jemalloc built without statistics: every read fails the way `JemallocStatistics.Reader` does.
    struct StatisticsDisabledSource: MemorySampleSource {
        var name: String { "jemalloc statistics" }
        var depth: SampleDepth { .full }
        func read(into sample: inout MemorySample) throws {
            throw JemallocError(kind: .statisticsDisabled, key: "stats.allocated", errno: 2)
        }
    }

    /// A cgroup whose memory.current cannot be read (a directory) and whose memory.events is
    /// missing, a PSI file holding garbage, a missing PSI file, and jemalloc without statistics.
    static func faultySources(in directory: TemporaryDirectory) throws -> [any MemorySampleSource] {
        try directory.makeDirectory("memory.current")
        try directory.write("memory.pressure", "some avg10=banana avg60=0.00 avg300=0.00 total=0\nfull garbage\n")
        return [
            ProcessMemorySampleSource(),
            ControlGroupSampleSource(group: ControlGroup(directory: directory.path)),
            PressureStallSampleSource(path: directory.path.appending("memory.pressure")),
            PressureStallSampleSource(path: directory.path.appending("absent.pressure")),
            StatisticsDisabledSource(),
        ]
    }

    @Test func unreadableMissingAndGarbageFiguresAreLoggedOnceAndTheRestIsSampled() throws {
        let directory = try TemporaryDirectory()
        let (logger, messages) = recordingLogger()
        let sampler = MemorySampler(sources: try Self.faultySources(in: directory) + [JemallocSampleSource()], logger: logger)
        for _ in 0..<5 {
            let sample = sampler.sample(.full)
            #expect(sample.residentBytes != nil)
            #expect(sample.jemalloc != nil)
            #expect(sample.cgroupCurrentBytes == nil)
            #expect(sample.pressureStall == nil)
        }
        #expect(messages.all.count == 4)
        let text = messages.all.joined(separator: "\n")
        #expect(text.contains("memory.current could not be read"))
        #expect(text.contains("memory.pressure is malformed"))
        #expect(text.contains("absent.pressure is not present"))
        #expect(text.contains("statistics"))
    }

    @Test func theMonitorKeepsSamplingAndJudgingWithEveryFaultySource() async throws {
        let directory = try TemporaryDirectory()
        let (logger, messages) = recordingLogger()
        let limits = MemoryLimits(physicalBytes: 1 << 42)
        var configuration = PressureMonitor.Configuration(budget: try MemoryBudget(totalBytes: 1 << 41, limits: limits), logger: logger)
        configuration.sources = try Self.faultySources(in: directory)
        configuration.interval = .milliseconds(5)
        configuration.allocatorRefreshInterval = .milliseconds(5)
        configuration.stallTrigger = nil
        configuration.controlGroupEvents = .none
        let monitor = PressureMonitor(configuration: configuration)
        let events = monitor.events.stream()
        try monitor.start()
        var samples = 0
        for await event in events {
            guard case .sample(let sample, _) = event else { continue }
            #expect(sample.residentBytes != nil)
            samples += 1
            if samples == 10 { break }
        }
        monitor.stop()
        #expect(samples == 10)
        #expect(monitor.level == .normal)
        #expect(messages.all.count == 4)
    }
}

/// The fault injection that allocates: alone among the tests that move process-wide memory. The
/// suite waits its turn before its tests' time limit starts, so a long queue behind the suites that
/// move hundreds of MiB (minutes under ThreadSanitizer on a loaded machine) is not taken for a hang.
@Suite(.exclusiveMemoryUse, .timeLimit(.minutes(5)))
struct FaultInjectionAllocationTests {
    @Test
    func anObserverAllocatingDuringAWarningRaisesASecondWarningThatQueuesBehindTheFirst() async throws {
        let heap = try AppHeap(app: AppIdentifier("allocating"))
        let buffers = Mutex<[HeapBuffer]>([])
        let allocating = try FaultInjectionTests.app("allocating", log: SharedLog())
        let bystanderLog = SharedLog<String>()
        let bystander = try FaultInjectionTests.app("bystander", log: bystanderLog)
        for app in [allocating, bystander] { try await app.launch() }
        // Pressure rising during reclamation: the heap crossing 1 MiB raises another warning at once.
        let second = Mutex<Task<WarningDelivery, Never>?>(nil)
        allocating.notificationCenter.addObserver(forName: .didReceiveMemoryWarning) { _, _ in
            // Re-entrant use of the heap from inside a warning.
            let before = heap.allocatedBytes
            if let buffer = try? heap.allocate(byteCount: 2 << 20, zeroed: true) {
                buffers.withLock { $0.append(buffer) }
            }
            if before < 1 << 20, heap.allocatedBytes >= 1 << 20 {
                second.withLock { $0 = Task { await MemoryWarning(level: .critical).deliver(to: [allocating, bystander]) { _ in 0 } } }
            }
        }
        _ = bystanderLog.take()

        let first = await MemoryWarning(level: .warning).deliver(to: [allocating, bystander]) { _ in 0 }
        let raised = try #require(second.withLock { $0 })
        let followUp = await raised.value
        #expect(first.appsReached == 2)
        #expect(followUp.appsReached == 2)
        #expect(bystanderLog.take() == Array(repeating: ["didReceiveMemoryWarning", "notification didReceiveMemoryWarning"], count: 2).flatMap { $0 })
        #expect(buffers.withLock { $0.count } == 2)
        #expect(heap.allocatedBytes >= 4 << 20)

        buffers.withLock { $0 = [] }
        #expect(heap.allocatedBytes == 0)
        #expect(heap.close())
        for app in [allocating, bystander] { try await app.terminate(reason: .explicit) }
    }
}
