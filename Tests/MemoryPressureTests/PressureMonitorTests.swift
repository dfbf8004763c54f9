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
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The monitor on its own thread. Serialized: the tests count the process's pipes and read its
/// resident bytes.
@Suite(.serialized, .exclusiveMemoryUse)
struct PressureMonitorTests {
    static let mebibyte = 1 << 20
    static let limits = MemoryLimits(physicalBytes: 1 << 40)

    /// A monitor over `sources` with short test intervals, no PSI trigger unless asked, and no
    /// cgroup event watches (the host's reclaim would wake it at random).
    static func configuration(
        budget: MemoryBudget,
        sources: [any MemorySampleSource],
        interval: Duration = .milliseconds(20),
        trigger: StallTrigger? = nil
    ) -> PressureMonitor.Configuration {
        var configuration = PressureMonitor.Configuration(budget: budget, logger: recordingLogger().0)
        configuration.sources = sources
        configuration.interval = interval
        configuration.allocatorRefreshInterval = interval
        configuration.settleTime = .milliseconds(100)
        configuration.repeatInterval = .seconds(60)
        configuration.stallTrigger = trigger
        configuration.controlGroupEvents = .none
        return configuration
    }

    static let budget = try! MemoryBudget(totalBytes: 1000 * mebibyte, limits: limits)

    @Test func startsStopsAndRestartsWithoutLeakingDescriptors() async throws {
        let watched = ["pipe:", PressureStall.systemPath.string, "/sys/fs/cgroup"]
        // The sources keep their files open for as long as they live (the monitor's lifetime);
        // starting and stopping must add and remove only the loop's own descriptors. Other suites
        // open and close such files meanwhile, so the loop's own are those that appear with it.
        let monitor = PressureMonitor(configuration: Self.configuration(
            budget: Self.budget, sources: PressureMonitor.Configuration.standardSources, trigger: .standard
        ))
        for _ in 0..<3 {
            let events = monitor.events.stream()
            // Taken as close around the start as can be: a descriptor another suite opens in
            // between, and keeps past the stop, would be taken for a leak.
            let before = openDescriptors(to: watched)
            try monitor.start()
            try monitor.start()  // already running: nothing more is made
            #expect(monitor.isRunning)
            let loops = openDescriptors(to: watched).subtracting(before)
            #expect(!loops.isEmpty)
            #expect(await events.first { $0.sample != nil } != nil)
            monitor.stop()
            #expect(!monitor.isRunning)
            // One of another suite's descriptors taken for the loop's is closed when that suite is
            // done with it; a descriptor the loop leaked never is.
            #expect(await eventually(within: .seconds(60)) { openDescriptors(to: watched).isDisjoint(with: loops) })
            // Stopping ends the streams: the loop finishes rather than hanging.
            var remaining = 0
            for await _ in events { remaining += 1 }
            #expect(remaining >= 0)
        }
        monitor.stop()  // stopping twice is harmless
        #expect(monitor.latestSample?.residentBytes != nil)
    }

    /// This monitor's own thread, found from an observer (called on it): other suites run
    /// monitors of their own at the same time, whose threads bear the same name.
    @Test func theSamplingThreadIsNamedWhileItRuns() async throws {
        let monitor = PressureMonitor(configuration: Self.configuration(budget: Self.budget, sources: [ScriptedSampleSource(residentBytes: 0)]))
        let task = SharedBox<pid_t?>(nil)
        let observation = monitor.events.observe { _ in
            if task.value == nil { task.value = PosixThread.currentTaskIdentifier }
        }
        defer { observation.cancel() }
        try monitor.start()
        #expect(await eventually { task.value != nil })
        let comm = FilePath("/proc/self/task/\(try #require(task.value))/comm")
        #expect((try? KernelFile.read(comm))?.trimmingSuffix(while: \.isNewline) == "mempressure")
        monitor.stop()
        #expect((try? KernelFile.read(comm)) == nil, "the thread is joined as the monitor stops")
    }

    @Test func rejectsANonPositiveInterval() {
        var configuration = Self.configuration(budget: Self.budget, sources: [ScriptedSampleSource(residentBytes: 0)])
        configuration.interval = .zero
        let monitor = PressureMonitor(configuration: configuration)
        let error = #expect(throws: MemoryPressureError.self) {
            try monitor.start()
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(
            error?.description == "pressure monitor interval 0.0 seconds is not positive; expected an interval greater than zero, such as 250ms"
        )
        #expect(!monitor.isRunning)
    }

    @Test func stallRaisesTheLevelThroughTheMonitor() async throws {
        let source = ScriptedSampleSource(residentBytes: 100 * Self.mebibyte)
        let monitor = PressureMonitor(configuration: Self.configuration(budget: Self.budget, sources: [source]))
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }
        #expect(await events.first { $0.sample != nil } != nil)
        #expect(monitor.level == .normal)

        source.set(stall: (some: 30, full: 12))
        let rise = try #require(await events.first { $0.change != nil }?.change)
        #expect(rise.kind == .rise)
        #expect(rise.level == .critical)

        source.set(stall: (some: 0, full: 0))
        let fall = try #require(await events.first { $0.change != nil }?.change)
        #expect(fall.kind == .fall)
        #expect(fall.level == .normal)
        #expect(monitor.level == .normal)
    }

    @Test func observersSeeTheSameEventsAsStreams() async throws {
        let source = ScriptedSampleSource(residentBytes: 900 * Self.mebibyte)
        let monitor = PressureMonitor(configuration: Self.configuration(budget: Self.budget, sources: [source]))
        let seen = Mutex<[PressureChange]>([])
        let observation = monitor.events.observe { event in
            if let change = event.change { seen.withLock { $0.append(change) } }
        }
        let events = monitor.events.stream()
        try monitor.start()
        let change = try #require(await events.first { $0.change != nil }?.change)
        monitor.stop()
        observation.cancel()
        #expect(change.level == .warning)
        #expect(seen.withLock { $0.first } == change)
    }

    @Test func sampleNowTakesAFullSampleBeforeTheInterval() async throws {
        let monitor = PressureMonitor(configuration: Self.configuration(
            budget: Self.budget, sources: PressureMonitor.Configuration.standardSources, interval: .seconds(600)
        ))
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }
        #expect(await events.first { $0.sample != nil } != nil)

        let requested = ContinuousClock.now
        monitor.sampleNow()
        let sample = try #require(await events.first(within: .seconds(60)) { $0.sample != nil }?.sample)
        #expect(sample.jemalloc != nil)
        #expect(sample.time >= requested)
    }

    /// A sample asked for while the sampling thread reads its clock (as one asked for at the
    /// start does, while the thread takes the first sample) is taken at an instant after the asking,
    /// not stamped with the time read before it: a wait for a sample "at the time now or later"
    /// would see none come.
    @Test func aSampleAskedForWhileTheThreadReadsTheTimeIsTakenAfterTheAsking() async throws {
        let clock = AskingClock()
        var configuration = Self.configuration(budget: Self.budget, sources: [ScriptedSampleSource(residentBytes: 0)], interval: .seconds(600))
        configuration.clock = clock
        let monitor = PressureMonitor(configuration: configuration)
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }
        #expect(await events.first { $0.sample != nil } != nil)

        let asked = SharedLog<ContinuousClock.Instant>()
        clock.duringTheNextRead {
            asked.append(.now)
            monitor.sampleNow()
        }
        await monitor.lookedAtTheTimeNow()  // a pass that reads the clock
        let requested = try #require(asked.all.first)
        let sample = try #require(await events.first(within: .seconds(60)) { $0.sample != nil }?.sample)
        #expect(sample.time >= requested)
    }

    /// The real allocator: a budget of the footprint now plus 64 MiB; 80 MiB allocated in an arena
    /// of the test's own and touched must raise the level, and freeing and purging them must bring it
    /// back to normal after the settle time.
    @Test func realAllocationsRaiseAndReleaseTheLevel() async throws {
        let footprint = try ProcessMemory.current().residentBytes
        let total = footprint + 64 * Self.mebibyte
        func ratio(_ extraMebibytes: Int) -> Double { Double(footprint + extraMebibytes * Self.mebibyte) / Double(total) }
        // Thresholds placed above today's footprint, so that the footprint now is normal.
        let thresholds = try MemoryBudget.Thresholds(
            warning: ratio(40), critical: ratio(56), warningRecovery: ratio(24), criticalRecovery: ratio(32)
        )
        let budget = try MemoryBudget(totalBytes: total, thresholds: thresholds, limits: Self.limits)
        let monitor = PressureMonitor(configuration: Self.configuration(budget: budget, sources: PressureMonitor.Configuration.standardSources))
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }

        let arena = try Arena.create()
        do {
            var allocation = try arena.allocate(byteCount: 80 * Self.mebibyte)
            allocation.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0x5A) }
            let rise = try #require(await events.first { $0.change?.kind == .rise }?.change)
            #expect(rise.level >= .warning)
            #expect(allocation.byteCount == 80 * Self.mebibyte)
        }
        try arena.purge()
        let fall = try #require(await events.first { $0.change?.level == .normal }?.change)
        #expect(fall.kind == .fall)
        #expect(try #require(fall.sample.footprintBytes) < budget.bytes(leavingBelow: .warning))
        try arena.destroy()
    }

    @Test func samplesCarryHowLongTheMonitorTookToReadThem() async throws {
        let monitor = PressureMonitor(configuration: Self.configuration(budget: Self.budget, sources: [ScriptedSampleSource(residentBytes: 0)]))
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }
        let sample = try #require(await events.first { $0.sample != nil }?.sample)
        #expect(try #require(sample.samplingDuration) > .zero)
        let sampler = MemorySampler(sources: [ScriptedSampleSource(residentBytes: 0)])
        #expect(sampler.sample(.full).samplingDuration == nil)
    }

    @Test func anObserverCanStopTheMonitor() async throws {
        let monitor = PressureMonitor(configuration: Self.configuration(budget: Self.budget, sources: [ScriptedSampleSource(residentBytes: 0)]))
        let observation = monitor.events.observe { [weak monitor] event in
            if event.sample != nil { monitor?.stop() }
        }
        let events = monitor.events.stream()
        try monitor.start()
        #expect(await events.ends())
        #expect(!monitor.isRunning)
        observation.cancel()
    }
}

extension PressureMonitorTests {
    /// A monitor that would sample once in ten minutes unless it samples fast.
    static func slowMonitor(over source: any MemorySampleSource) -> PressureMonitor {
        var configuration = configuration(budget: budget, sources: [source], interval: .seconds(600))
        configuration.fastInterval = .milliseconds(10)
        return PressureMonitor(configuration: configuration)
    }

    /// Counts samples until `count` have come, or none came for `quiet`; returns how many came.
    static func samples(_ events: AsyncStream<PressureEvent>, upTo count: Int, quiet: Duration) async -> Int {
        var seen = 0
        while seen < count, await events.first(within: quiet, where: { $0.sample != nil }) != nil { seen += 1 }
        return seen
    }

    @Test func samplesFastWhileAboveTheWarningThresholdAndReturnsToItsIntervalOnceCalm() async throws {
        let source = ScriptedSampleSource(residentBytes: 900 * Self.mebibyte)
        let monitor = Self.slowMonitor(over: source)
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }
        // Ten samples of a ten-minute interval can only come from the fast interval.
        #expect(await Self.samples(events, upTo: 10, quiet: .seconds(30)) == 10)

        source.set(residentBytes: 100 * Self.mebibyte, stall: nil)
        _ = await events.first(within: .seconds(30)) { $0.sample?.footprintBytes == 100 * Self.mebibyte }
        #expect(await Self.samples(events, upTo: 10, quiet: .seconds(1)) == 0)
    }

    @Test func samplesFastWhileTheFootprintGrowsFasterThanTheConfiguredRate() async throws {
        let source = GrowingSource(start: 100 * Self.mebibyte, step: 8 * Self.mebibyte)
        let monitor = Self.slowMonitor(over: source)
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }
        // Growth needs two samples to be seen: the first comes at start, the second on request.
        #expect(await Self.samples(events, upTo: 1, quiet: .seconds(30)) == 1)
        monitor.sampleNow()
        // Far below the warning threshold (800 MiB), but 8 MiB a sample, 10 ms apart, is 800 MiB/s.
        #expect(await Self.samples(events, upTo: 10, quiet: .seconds(30)) == 10)
        #expect(try #require(monitor.latestSample?.footprintBytes) < 800 * Self.mebibyte)
    }
}

/// A source whose resident bytes grow by `step` at every reading.
final class GrowingSource: MemorySampleSource {
    private let next: Mutex<Int>
    private let step: Int

    init(start: Int, step: Int) {
        next = Mutex(start)
        self.step = step
    }

    var name: String { "growing" }
    var depth: SampleDepth { .cheap }

    func read(into sample: inout MemorySample) throws {
        sample.residentBytes = next.withLock { bytes in
            defer { bytes += step }
            return bytes
        }
    }
}

/// The continuous clock, which runs a closure once in the middle of a read: after the time it
/// returns was read, before the reader has it.
private final class AskingClock: LibraryClock {
    private let pending = Mutex<(@Sendable () -> Void)?>(nil)

    /// Runs `ask` during the next read of ``now``.
    func duringTheNextRead(_ ask: @escaping @Sendable () -> Void) {
        pending.withLock { $0 = ask }
    }

    var now: ContinuousClock.Instant {
        let now = ContinuousClock.now
        pending.withLock { pending in defer { pending = nil }; return pending }?()
        return now
    }

    func sleepDeadline(for deadline: ContinuousClock.Instant) -> ContinuousClock.Instant? { deadline }

    func onStep(_ wake: @escaping @Sendable () -> Void) {}
}
