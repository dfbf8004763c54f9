import Benchmark
import BenchmarkSupport
import Jemalloc
@_spi(Benchmarks) import MemoryPressure
import MemoryPressureTestKit
import Synchronization

/// The cost of reading the figures the pressure monitor samples, and of the monitor itself.
let benchmarks: @Sendable () -> Void = {
    // Each measured run is a thousand operations, so that per-run set-up and the harness's own
    // costs do not swamp operations that take tens of nanoseconds.
    Benchmark.defaultConfiguration = RunMode.current.configuration(scalingFactor: .kilo, maxIterations: 100_000)
    let countingAllocations = RunMode.current.configuration(
        counted: [allocationsPerOperation], scalingFactor: .kilo, maxIterations: 100_000
    )

    // Names carry no spaces: the benchmark tool writes threshold files with spaces replaced but
    // reads them with the names as they are.
    Benchmark("jemalloc-epoch-refresh") { benchmark in
        for _ in benchmark.scaledIterations {
            try Jemalloc.advanceEpoch()
        }
    }

    // Six process statistics without an epoch refresh, through MIBs resolved once, and by name.
    Benchmark("jemalloc-statistics-cached-MIBs") { benchmark in
        let reader = try JemallocStatistics.Reader()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try reader.read(advancingEpoch: false))
        }
    }

    Benchmark("jemalloc-statistics-by-name") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try MallctlKey.statsAllocated.read())
            blackHole(try MallctlKey.statsActive.read())
            blackHole(try MallctlKey.statsResident.read())
            blackHole(try MallctlKey.statsMapped.read())
            blackHole(try MallctlKey.statsRetained.read())
            blackHole(try MallctlKey.statsMetadata.read())
        }
    }

    // The files of a sample opened, read and closed each time, for comparison with the kept-open
    // descriptors the sampler uses: statm through the test kit's `residentBytes()`, and the
    // system's PSI file.
    Benchmark("statm-opened-each-time") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try residentBytes())
        }
    }

    Benchmark("PSI-opened-each-time") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? PressureStall.read())
        }
    }

    // Samplers are made before the measurement starts: making one finds the cgroup and PSI files
    // and opens them, which costs far more than a sample, and logs the figures this machine lacks.
    // Both read the monitor's standard sources: a cheap sample reads /proc/self/statm; a full one
    // also refreshes jemalloc's epoch and reads its statistics, the cgroup's files where they exist
    // and PSI. The allocations are counted after the timed loop, over as many samples again.
    Benchmark("sample-cheap", configuration: countingAllocations) { benchmark in
        let sampler = MemorySampler(sources: PressureMonitor.Configuration.standardSources, logger: silentLogger)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(sampler.sample(.cheap))
        }
        benchmark.stopMeasurement()
        benchmark.measurement(allocationsPerOperation, HeapUsage.allocationsPerRun(1000) { blackHole(sampler.sample(.cheap)) })
    }

    Benchmark("sample-full", configuration: countingAllocations) { benchmark in
        let sampler = MemorySampler(sources: PressureMonitor.Configuration.standardSources, logger: silentLogger)
        _ = sampler.sample(.full)  // sources whose files are missing are retired on the first sample
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(sampler.sample(.full))
        }
        benchmark.stopMeasurement()
        benchmark.measurement(allocationsPerOperation, HeapUsage.allocationsPerRun(1000) { blackHole(sampler.sample(.full)) })
    }

    // The monitor at its defaults (250 ms interval, a full sample at least every second, the PSI
    // trigger armed), measured on its own thread while this one sleeps.
    let monitoredTime: Duration = RunMode.current == .short ? .milliseconds(500) : .seconds(4)
    Benchmark(
        "monitor-CPU-per-second",
        configuration: RunMode.current.configuration(
            timed: [monitorCPU], warmupIterations: 0, maxDuration: .seconds(30), maxIterations: 4
        )
    ) { benchmark in
        let budget = try MemoryBudget(totalBytes: 1 << 30)
        let monitor = PressureMonitor(configuration: PressureMonitor.Configuration(budget: budget, logger: silentLogger))
        try monitor.start()
        // Steady state: from after the first sample (the thread's start-up, arming the PSI
        // trigger and the first full sample are not the per-second cost).
        while monitor.latestSample == nil {
            sleep(for: .milliseconds(1))
        }
        let start = try cpuNanoseconds(ofThreadNamed: "mempressure").unwrapped("the monitor's thread")
        sleep(for: monitoredTime)
        let spent = try cpuNanoseconds(ofThreadNamed: "mempressure").unwrapped("the monitor's thread") - start
        monitor.stop()
        benchmark.measurement(monitorCPU, spent * 1000 / Int(monitoredTime / .milliseconds(1)))
    }

    // The same monitor under pressure: its budget puts the process's footprint at 85 % of it,
    // over the warning threshold (80 %) and under the critical one (95 %), so that it samples every
    // fast interval (10 ms). Its samples are counted (by an observer, on the monitor's thread), and
    // the run fails unless it took at least 50 a second and stayed at the warning level throughout.
    // Beside it, over the same seconds, the floor: a thread that does nothing but wait 10 ms in
    // `poll`, measured the same way. How long the monitor's own reads of a sample took is the mean of
    // its samples' `samplingDuration`.
    //
    // Then, with the monitor stopped, as many seconds of the least monitor beside the floor: a
    // thread that waits as the floor does and then reads `/proc/self/statm` (the one reading no
    // monitor can skip) with no library code, so the run also says what any monitor pays above
    // the floor on this machine.
    Benchmark(
        "monitor-CPU-per-second-under-pressure",
        configuration: RunMode.current.configuration(
            timed: [monitorCPU, pollLoopCPU, samplesPerSecond, sampleReadInMonitor, leastMonitorCPU, pollLoopCPUBesideTheLeastMonitor],
            warmupIterations: 0, maxDuration: .seconds(60), maxIterations: 4
        )
    ) { benchmark in
        let budget = try MemoryBudget(totalBytes: Int(Double(try residentBytes()) / 0.85))
        let monitor = PressureMonitor(configuration: PressureMonitor.Configuration(budget: budget, logger: silentLogger))
        // Counted with atomic adds, not a lock and a set: the observer runs on the monitor's
        // thread, and its cost would count as the monitor's.
        let samples = SampleCount()
        let counting = monitor.events.observe { event in
            if case .sample(let sample, let level) = event { samples.count(level, readIn: sample.samplingDuration ?? .zero) }
        }
        defer { counting.cancel() }
        try monitor.start()
        let floor = try PollLoop(name: "poll-floor", interval: .milliseconds(10))
        defer { floor.stop() }
        // Steady state: from the first sample at the warning level.
        let deadline = ContinuousClock.now + .seconds(5)
        while monitor.level != .warning {
            guard ContinuousClock.now < deadline else { throw BenchmarkFailure("the monitor did not reach the warning level") }
            sleep(for: .milliseconds(1))
        }
        samples.reset()
        let (spent, floorSpent) = try cpuNanoseconds(ofThreadsNamed: "mempressure", "poll-floor", over: monitoredTime)
        let sampled = samples.taken
        monitor.stop()
        let milliseconds = Int(monitoredTime / .milliseconds(1))
        guard sampled.count * 1000 / milliseconds >= 50, sampled.levels == [.warning] else {
            throw BenchmarkFailure("the monitor took \(sampled.count) samples in \(monitoredTime) at \(sampled.levels)")
        }

        let leastMonitor = try PollLoop(name: "least-monitor", interval: .milliseconds(10), readingStatm: true)
        defer { leastMonitor.stop() }
        let (leastSpent, floorSpentBesideTheLeast) = try cpuNanoseconds(ofThreadsNamed: "least-monitor", "poll-floor", over: monitoredTime)
        guard leastMonitor.lastResidentPages > 0 else { throw BenchmarkFailure("the least monitor read no resident pages") }

        benchmark.measurement(monitorCPU, spent * 1000 / milliseconds)
        benchmark.measurement(pollLoopCPU, floorSpent * 1000 / milliseconds)
        benchmark.measurement(samplesPerSecond, sampled.count * 1000 / milliseconds)
        benchmark.measurement(sampleReadInMonitor, sampled.readNanoseconds / max(1, sampled.count))
        benchmark.measurement(leastMonitorCPU, leastSpent * 1000 / milliseconds)
        benchmark.measurement(pollLoopCPUBesideTheLeastMonitor, floorSpentBesideTheLeast * 1000 / milliseconds)
    }
}

/// The samples a monitor published, the levels they were judged at, and how long reading them
/// took, counted by its observer without a lock.
final class SampleCount: Sendable {
    private let samples = Atomic<Int>(0)
    private let readNanoseconds = Atomic<Int>(0)
    /// One bit per level seen.
    private let levels = Atomic<Int>(0)

    func count(_ level: PressureLevel, readIn duration: Duration) {
        samples.add(1, ordering: .relaxed)
        readNanoseconds.add(Int(duration / .nanoseconds(1)), ordering: .relaxed)
        levels.bitwiseOr(1 << Self.bit(level), ordering: .relaxed)
    }

    func reset() {
        samples.store(0, ordering: .relaxed)
        readNanoseconds.store(0, ordering: .relaxed)
        levels.store(0, ordering: .relaxed)
    }

    /// The samples counted since the last reset, their levels, and the time their reading took.
    var taken: (count: Int, levels: Set<PressureLevel>, readNanoseconds: Int) {
        let seen = levels.load(ordering: .relaxed)
        let all: [PressureLevel] = [.normal, .warning, .critical]
        return (samples.load(ordering: .relaxed), Set(all.filter { seen & 1 << Self.bit($0) != 0 }), readNanoseconds.load(ordering: .relaxed))
    }

    private static func bit(_ level: PressureLevel) -> Int {
        switch level {
        case .normal: 0
        case .warning: 1
        case .critical: 2
        }
    }
}
