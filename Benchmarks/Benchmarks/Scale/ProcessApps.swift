#if canImport(Glibc)
import Glibc
#endif
import Benchmark
import BenchmarkSupport
import MemoryPressure
import MemoryPressureTestKit
import Synchronization

// 1,000 process apps, through the public API only: N children (`sleep 600`, each its own process
// app) registered, launched, sent to the background (suspended, so frozen) and terminated, half by
// `terminate(reason: .systemPressure)` and half by the ladder at critical pressure. Heavy (1,000
// processes and their cgroups), so in the Scale suite, which CI leaves out; 100 children in the
// short mode.

let processLaunchPerApp = BenchmarkMetric.custom("process app launch per app (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let processBackgroundPerApp = BenchmarkMetric.custom(
    "process app to suspended per app (ns)", polarity: .prefersSmaller, useScalingFactor: false
)
let sampleWithoutChildren = BenchmarkMetric.custom("sample, no process app (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let sampleWithChildren = BenchmarkMetric.custom("sample, every process app frozen (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let sampleTenthRunning = BenchmarkMetric.custom(
    "sample, a tenth of the process apps running, the rest frozen (ns)", polarity: .prefersSmaller, useScalingFactor: false
)
let samplePerChild = BenchmarkMetric.custom("sample cost per process app (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let terminateP50 = BenchmarkMetric.custom("terminate suspended process app p50 (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let terminateP90 = BenchmarkMetric.custom("terminate suspended process app p90 (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let ladderPerVictim = BenchmarkMetric.custom("ladder per process app victim (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let threadsAbove = BenchmarkMetric.custom("threads at peak above the start", polarity: .prefersSmaller, useScalingFactor: false)
let childrenReaped = BenchmarkMetric.custom("process apps reaped", polarity: .prefersLarger, useScalingFactor: false)

/// Registers `Scale-process-apps:N`: called from the suite's `benchmarks` (Scale.swift).
func processAppBenchmarks() {
    for count in RunMode.current == .short ? [100] : [1_000] {
        Benchmark(
            "Scale-process-apps:\(count)",
            configuration: RunMode.current.configuration(
                timed: [
                    processLaunchPerApp, processBackgroundPerApp, sampleWithoutChildren, sampleTenthRunning, sampleWithChildren, samplePerChild,
                    terminateP50, terminateP90, ladderPerVictim, threadsAbove,
                ],
                counted: [childrenReaped],
                warmupIterations: 0, maxDuration: .seconds(120), maxIterations: 3
            )
        ) { benchmark in
            let figures: ProcessAppFigures
            do {
                figures = try await ProcessAppFigures.measure(count)
            } catch {
                print("Scale-process-apps:\(count) failed: \(error)")
                throw error
            }
            benchmark.measurement(processLaunchPerApp, figures.launchPerApp)
            benchmark.measurement(processBackgroundPerApp, figures.backgroundPerApp)
            benchmark.measurement(sampleWithoutChildren, figures.sampleWithout)
            benchmark.measurement(sampleTenthRunning, figures.sampleTenthRunning)
            benchmark.measurement(sampleWithChildren, figures.sampleFrozen)
            benchmark.measurement(samplePerChild, figures.samplePerApp)
            benchmark.measurement(terminateP50, figures.terminateP50)
            benchmark.measurement(terminateP90, figures.terminateP90)
            benchmark.measurement(ladderPerVictim, figures.ladderPerVictim)
            benchmark.measurement(threadsAbove, figures.threadsPeak - figures.threadsBefore)
            benchmark.measurement(childrenReaped, figures.reaped)
            if RunMode.current == .full { print(figures) }
        }
    }
}

/// `count` process apps through their lifecycle, and what each step costs.
///
/// One system, sampled every 20 ms (the benchmark configuration) from a scripted source, so that a
/// sample's own cost is that of reading the children's footprints over a fixed base: the p50 of
/// `MemorySample.samplingDuration`, from the samples `system.monitor.events` publishes, with no
/// process app, with `count` running, with a tenth of them running and the rest frozen, and with
/// `count` frozen (a frozen child is read once, as it is frozen; a running one on every sample).
/// Each app is registered and launched with the monitor stopped (its child started in cgroups of
/// its own where the machine allows), then, the system running, sent to the background, where it
/// is suspended and frozen. The first half are terminated one by one with
/// `terminate(reason: .systemPressure)`, timed from the call to its return (the child killed and
/// reaped), a quarter with the monitor stopped and a quarter with it running; then the scripted
/// footprint is raised over critical with a target the ladder cannot reach, and the ladder
/// terminates the other half, one victim at a time: its per-victim time is its
/// `terminateSuspended` steps' duration over their victims (`system.ladderRuns`). Threads are
/// counted before, every millisecond meanwhile, and after. Last, every child must be reaped (no
/// zombie, none alive), every cgroup made for them removed, and the exit watch's thread
/// (`mp-child-exits`) gone.
struct ProcessAppFigures: CustomStringConvertible {
    var launchPerApp = 0
    var launchP90 = 0
    var backgroundPerApp = 0
    var returnedInBackground = 0
    var sampleWithout = 0
    var sampleRunning = 0
    var sampleTenthRunning = 0
    var sampleFrozen = 0
    var samplePerApp = 0
    var terminateP50 = 0
    var terminateP90 = 0
    var terminateRunningP50 = 0
    var terminateRunningP90 = 0
    var ladderPerVictim = 0
    var ladderVictims = 0
    var threadsBefore = 0
    var threadsRunning = 0
    var threadsPeak = 0
    var threadsAfter = 0
    var reaped = 0
    var freezer = ""
    var memory = 0

    var description: String {
        """
        process apps: launch \(launchPerApp) ns per app (p90 \(launchP90)), to suspended \(backgroundPerApp) ns per app \
        (\(returnedInBackground) returned in the background); \
        sample p50 \(sampleWithout) ns with none, \(sampleRunning) ns running, \(sampleTenthRunning) ns with a tenth running, \
        \(sampleFrozen) ns frozen: \
        \(samplePerApp) ns per process app; terminate p50 \(terminateP50) ns, p90 \(terminateP90) ns with the monitor stopped, \
        p50 \(terminateRunningP50) ns, p90 \(terminateRunningP90) ns with it running; \
        ladder \(ladderPerVictim) ns per victim over \(ladderVictims); threads \(threadsBefore) before, \
        \(threadsRunning) with every child running, \(threadsPeak) at peak, \(threadsAfter) after; \
        \(reaped) reaped; freezer \(freezer); process app bytes \(memory)
        """
    }

    /// How many samples each sampling figure is the p50 of.
    static let samples = 50

    static func measure(_ count: Int) async throws -> ProcessAppFigures {
        var figures = ProcessAppFigures()
        figures.threadsBefore = processThreadCount()
        let peak = PeakThreadCount()
        let source = ScriptedSampleSource(residentBytes: 64 * mebibyte)
        var configuration = try MemorySystem.Configuration.benchmark(targetBytes: 8 << 30)
        configuration.monitor.sources = [source]
        let system = try MemorySystem(configuration: configuration)
        let durations = SampleDurations()
        let token = system.monitor.events.observe { event in
            if case .sample(let sample, _) = event { durations.add(sample) }
        }
        defer { token.cancel() }
        var running = Task { try await system.run() }
        figures.sampleWithout = try await durations.median(of: samples, expectingProcessApps: false)
        // Launched with the monitor stopped: the launch's own cost, with no sample holding the
        // children's table meanwhile.
        running.cancel()
        _ = await running.result

        // Launch: register and launch each, timed together.
        let clock = ContinuousClock()
        var apps: [App] = []
        var pids: [Int32] = []
        var controlGroups: [String] = []
        var launches: [Int] = []
        apps.reserveCapacity(count)
        for index in 0..<count {
            let start = clock.now
            let app = try system.register(
                try AppIdentifier("child-\(index)"), process: ProcessSpecification(executable: "sleep", arguments: ["600"])
            )
            let state = try await app.launch()
            launches.append((clock.now - start).wholeNanoseconds)
            guard state == .active, let process = system.process(of: app.identifier) else {
                throw BenchmarkFailure("\(app.identifier) did not launch: \(state), \(app.terminationReason.map(\.description) ?? "")")
            }
            apps.append(app)
            pids.append(process.pid)
            controlGroups += process.controlGroups
            if index == 0 { figures.freezer = process.freezeMechanism.description }
        }
        figures.launchPerApp = launches.reduce(0, +) / count
        figures.launchP90 = percentile(launches, 90)
        running = Task { try await system.run() }
        figures.threadsRunning = processThreadCount()
        figures.sampleRunning = try await durations.median(of: samples, expectingProcessApps: true)

        // To the background: each suspended, and so frozen, all but a tenth first, timed together
        // with the rest. `enterBackground` may return while the app is still in the background
        // (the system still running some of its code); it is suspended a moment later.
        var start = clock.now
        var backgroundTime = Duration.zero
        var returnedInBackground = 0
        for part in [apps[..<(count - count / 10)], apps[(count - count / 10)...]] {
            returnedInBackground += try await suspend(part, in: system)
            backgroundTime += clock.now - start
            guard part.startIndex == 0 else { break }
            figures.sampleTenthRunning = try await durations.median(of: samples, expectingProcessApps: true)
            start = clock.now
        }
        figures.backgroundPerApp = backgroundTime.wholeNanoseconds / count
        figures.returnedInBackground = returnedInBackground
        figures.sampleFrozen = try await durations.median(of: samples, expectingProcessApps: true)
        figures.memory = durations.lastProcessAppBytes
        figures.samplePerApp = max(0, figures.sampleFrozen - figures.sampleWithout) / count

        // The first half terminated by hand: from the call to its return, the child killed and
        // reaped; a quarter with the monitor stopped, a quarter with it running.
        let half = count / 2
        var terminations: [Int] = []
        var terminationsRunning: [Int] = []
        running.cancel()
        _ = await running.result
        for (index, (app, pid)) in zip(apps[..<half], pids[..<half]).enumerated() {
            if index == half / 2 { running = Task { try await system.run() } }
            start = clock.now
            _ = try await app.terminate(reason: .systemPressure)
            let nanoseconds = (clock.now - start).wholeNanoseconds
            if index < half / 2 { terminations.append(nanoseconds) } else { terminationsRunning.append(nanoseconds) }
            guard childState(pid) == nil else {
                throw BenchmarkFailure("\(app.identifier)'s child \(pid) was not reaped when terminate returned")
            }
        }
        figures.terminateP50 = percentile(terminations, 50)
        figures.terminateP90 = percentile(terminations, 90)
        figures.terminateRunningP50 = percentile(terminationsRunning, 50)
        figures.terminateRunningP90 = percentile(terminationsRunning, 90)

        // The other half by the ladder: critical pressure, a target it cannot reach.
        source.set(residentBytes: system.budget.bytes(enteringAbove: .critical) + 64 * mebibyte, stall: nil)
        let deadline = clock.now + .seconds(120)
        while apps[half...].contains(where: { $0.state != .notRunning }), clock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        source.set(residentBytes: 64 * mebibyte, stall: nil)
        let steps = system.ladderRuns.flatMap(\.steps).filter { $0.step == .terminateSuspended && !$0.terminated.isEmpty }
        figures.ladderVictims = steps.reduce(0) { $0 + $1.terminated.count }
        guard figures.ladderVictims == count - half else {
            throw BenchmarkFailure("the ladder terminated \(figures.ladderVictims) process apps of \(count - half)")
        }
        figures.ladderPerVictim = steps.reduce(0) { $0 + $1.duration.wholeNanoseconds } / figures.ladderVictims

        running.cancel()
        _ = await running.result
        await system.shutDown()
        figures.threadsPeak = await peak.stop()

        // Every child reaped, every cgroup gone, the exit watch's thread ended.
        let left = pids.compactMap { pid in childState(pid).map { "\(pid) (\($0))" } }
        guard left.isEmpty else { throw BenchmarkFailure("children not reaped: \(left.prefix(10))") }
        figures.reaped = pids.count
        let groupsLeft = controlGroups.filter { access($0, F_OK) == 0 }
        guard groupsLeft.isEmpty else { throw BenchmarkFailure("cgroups left: \(groupsLeft.prefix(10))") }
        let watchEnds = clock.now + .seconds(10)
        while threadNames().contains("mp-child-exits"), clock.now < watchEnds {
            try await Task.sleep(for: .milliseconds(5))
        }
        guard !threadNames().contains("mp-child-exits") else { throw BenchmarkFailure("the exit watch's thread still runs") }
        figures.threadsAfter = processThreadCount()
        withExtendedLifetime(system) {}
        return figures
    }

    /// Sends `apps` to the background and waits until each is suspended with its child frozen;
    /// returns how many `enterBackground` calls returned `.background`.
    private static func suspend(_ apps: ArraySlice<App>, in system: MemorySystem) async throws -> Int {
        var returnedInBackground = 0
        for app in apps {
            switch try await app.enterBackground() {
            case .suspended: break
            case .background: returnedInBackground += 1
            case let state: throw BenchmarkFailure("\(app.identifier) went to \(state), not to the background")
            }
        }
        let clock = ContinuousClock()
        let suspendedBy = clock.now + .seconds(60)
        while apps.contains(where: { $0.state != .suspended }), clock.now < suspendedBy {
            try await Task.sleep(for: .milliseconds(1))
        }
        guard apps.allSatisfy({ $0.state == .suspended }) else { throw BenchmarkFailure("not every process app was suspended") }
        guard apps.allSatisfy({ system.process(of: $0.identifier)?.isFrozen == true }) else {
            throw BenchmarkFailure("not every process app's child is frozen")
        }
        return returnedInBackground
    }
}

/// The samples' `samplingDuration`s, as the monitor publishes them.
final class SampleDurations: Sendable {
    private struct State {
        var nanoseconds: [Int] = []
        var processAppBytes: Int?
        var withProcessApps = 0
    }

    private let state = Mutex(State())

    func add(_ sample: MemorySample) {
        guard let duration = sample.samplingDuration else { return }
        state.withLock { state in
            state.nanoseconds.append(duration.wholeNanoseconds)
            state.processAppBytes = sample.processAppBytes
            if sample.processAppBytes != nil { state.withProcessApps += 1 }
        }
    }

    var lastProcessAppBytes: Int { state.withLock { $0.processAppBytes ?? 0 } }

    /// The p50 of the next `count` samples' durations; each must carry process apps' bytes or not.
    func median(of count: Int, expectingProcessApps: Bool) async throws -> Int {
        state.withLock { $0 = State() }
        let deadline = ContinuousClock.now + .seconds(60)
        while state.withLock({ $0.nanoseconds.count }) < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let (taken, withProcessApps) = state.withLock { ($0.nanoseconds, $0.withProcessApps) }
        guard taken.count >= count else { throw BenchmarkFailure("\(taken.count) samples in 60 s") }
        guard withProcessApps == (expectingProcessApps ? taken.count : 0) else {
            throw BenchmarkFailure("\(withProcessApps) samples of \(taken.count) carried process apps' bytes")
        }
        return percentile(taken, 50)
    }
}

/// The `p`th percentile of `values` (nearest rank).
func percentile(_ values: [Int], _ p: Int) -> Int {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, max(0, (sorted.count * p + 99) / 100 - 1))]
}

/// `pid`'s state letter (`/proc/PID/stat`) while it is still this process's child, alive or a
/// zombie; nil once it is reaped.
func childState(_ pid: Int32) -> Character? {
    let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes = [UInt8](repeating: 0, count: 1_024)
    let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    guard count > 0 else { return nil }
    let text = String(decoding: bytes.prefix(count), as: UTF8.self)
    guard let close = text.lastIndex(of: ")") else { return nil }
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 1, Int32(fields[1]) == getpid(), let state = fields[0].first else { return nil }
    return state
}

/// The names of the process's threads (`/proc/self/task/*/comm`).
func threadNames() -> [String] {
    guard let directory = opendir("/proc/self/task") else { return [] }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard name.first?.isNumber == true else { continue }
        let descriptor = open("/proc/self/task/\(name)/comm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { continue }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        if count > 0 { names.append(String(decoding: bytes.prefix(count).filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self)) }
    }
    return names
}
