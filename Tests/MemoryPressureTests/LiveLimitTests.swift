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
import Logging
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import SystemPackage
import Testing

/// A fake cgroup tree in which the kernel's part is played by the test: the process's memory cgroup
/// is `pod/ctr`, under `pod`, and a limit is set on either. On v1 and hybrid hosts the kernel keeps
/// `memory.stat`'s `hierarchical_memory_limit` as the smallest limit to the root, so the tree writes
/// it as the kernel would.
final class LiveLimitTree {
    enum Layout: String, CaseIterable, Sendable { case v1, v2, hybrid }
    enum Level: Sendable { case own, ancestor }

    static let v1Unlimited = 9_223_372_036_854_771_712

    let fake: FakeCgroupTree
    let layout: Layout
    let discovery: ControlGroupDiscovery
    private var limits: (own: Int?, ancestor: Int?) = (nil, nil)

    init(_ layout: Layout) throws {
        fake = try FakeCgroupTree()
        self.layout = layout
        switch layout {
        case .v2:
            try fake.write("", ["cgroup.controllers": "memory\n"])
            for directory in ["pod", "pod/ctr"] {
                try fake.write(directory, ["cgroup.controllers": "memory\n", "memory.max": "max\n", "memory.high": "max\n", "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"])
            }
            discovery = ControlGroupDiscovery.discover(membership: "0::/pod/ctr\n", mountInfo: fake.cgroup2Line(at: ""))
        case .v1, .hybrid:
            try fake.write("unified", ["cgroup.controllers": "\n"])
            for directory in ["memory/pod", "memory/pod/ctr"] {
                try fake.write(directory, ["memory.limit_in_bytes": "\(Self.v1Unlimited)\n", "memory.pressure_level": "", "cgroup.event_control": ""])
            }
            let mounts = [fake.cgroup1Line(at: "memory", controllers: "memory")] + (layout == .hybrid ? [fake.cgroup2Line(at: "unified")] : [])
            discovery = ControlGroupDiscovery.discover(
                membership: "4:memory:/pod/ctr\n" + (layout == .hybrid ? "0::/\n" : ""), mountInfo: mounts.joined(separator: "\n")
            )
        }
        try writeStat()
    }

    /// The process's own cgroup directory.
    var directory: FilePath {
        fake.root.path.appending(layout == .v2 ? "pod/ctr" : "memory/pod/ctr")
    }

    /// Sets (or with nil removes) the limit on the process's cgroup or its parent.
    func setLimit(_ bytes: Int?, on level: Level) throws {
        let relative = (layout == .v2 ? "" : "memory/") + (level == .own ? "pod/ctr" : "pod")
        let name = layout == .v2 ? "memory.max" : "memory.limit_in_bytes"
        let text = bytes.map(String.init) ?? (layout == .v2 ? "max" : "\(Self.v1Unlimited)")
        try Self.replace(fake.root.path.appending(relative).appending(name), with: text + "\n")
        if level == .own { limits.own = bytes } else { limits.ancestor = bytes }
        try writeStat()
    }

    /// Sets the limit as the kernel changes a cgroup file, in place: `memory.stat` first (v1), then
    /// the limit file rewritten from its start at a fixed width (padded with spaces, as the reader
    /// trims them), so that a watch on it sees a write and a reader never an empty or partial file.
    func setLimitInPlace(_ bytes: Int?, on level: Level) throws {
        if level == .own { limits.own = bytes } else { limits.ancestor = bytes }
        try writeStat()
        let text = bytes.map(String.init) ?? (layout == .v2 ? "max" : "\(Self.v1Unlimited)")
        try KernelEventWakeTests.overwrite(limitFile(on: level), with: text + String(repeating: " ", count: max(0, 24 - text.count)) + "\n")
    }

    /// The file that sets the limit on the process's cgroup or its parent.
    func limitFile(on level: Level) -> FilePath {
        let relative = (layout == .v2 ? "" : "memory/") + (level == .own ? "pod/ctr" : "pod")
        return fake.root.path.appending(relative).appending(layout == .v2 ? "memory.max" : "memory.limit_in_bytes")
    }

    /// The v1 `memory.stat` of the process's cgroup, with the hierarchical limit the kernel keeps.
    private func writeStat() throws {
        guard layout != .v2 else { return }
        let (own, ancestor) = limits
        let hierarchical = [own, ancestor].compactMap { $0 }.min() ?? Self.v1Unlimited
        let stat = directory.appending("memory.stat")
        try Self.replace(stat, with: "cache 0\nrss 4096\nhierarchical_memory_limit \(hierarchical)\ntotal_inactive_file 0\n")
    }

    /// Replaces the file at `path` in one step (written beside it, then renamed over it), so that a
    /// monitor reading it meanwhile finds the old text or the new, never a part.
    static func replace(_ path: FilePath, with text: String) throws {
        let written = FilePath(path.string + ".new")
        let file = try FileDescriptor.open(written, .writeOnly, options: [.create, .truncate], permissions: .ownerReadWrite)
        _ = try file.closeAfter { try file.writeAll(text.utf8) }
        guard rename(written.string, path.string) == 0 else { throw Errno(rawValue: errno) }
    }

    /// How a monitor reads this tree's limits, on a machine of `physicalBytes`.
    func reader(physicalBytes: Int) -> MemoryLimitsReader {
        .reading(discovery, physicalBytes: physicalBytes)
    }

    /// The tree's limits now.
    func limits(physicalBytes: Int) -> MemoryLimits {
        MemoryLimits.reading(discovery, physicalBytes: physicalBytes)
    }
}

/// The budget follows the cgroup's limit while the monitor runs: over fake v1, v2 and hybrid trees,
/// a limit lowered on the process's cgroup or an ancestor, raised or removed moves an automatic
/// budget within one check interval (or at once on a kernel event) and publishes one change; a budget
/// given in bytes is lowered only while the limit is below it. Monitors run here, so the suite takes
/// the process's memory alone, as the other suites that run monitors do.
@Suite(.exclusiveMemoryUse)
struct LiveLimitTests {
    static let gibibyte = 1 << 30
    static let physical = 64 * gibibyte

    /// A monitor over `tree` that samples once in ten minutes unless woken, checks the limits every
    /// `checkInterval`, and watches `targets` for kernel events, on `clock` (which the tests step).
    static func monitor(
        _ tree: LiveLimitTree, budget: MemoryBudget, checkInterval: Duration, clock: ManualClock,
        targets: ControlGroupEventTargets = .none, logger: Logger = recordingLogger().0
    ) -> PressureMonitor {
        var configuration = PressureMonitorTests.configuration(budget: budget, sources: [ProcessMemorySampleSource()], interval: .seconds(600))
        configuration.fastSamplingGrowthRate = .max
        configuration.limitCheckInterval = checkInterval
        configuration.limitsReader = tree.reader(physicalBytes: physical)
        configuration.controlGroupEvents = targets
        configuration.logger = logger
        configuration.clock = clock
        return PressureMonitor(configuration: configuration)
    }

    /// The budget changes `monitor` publishes, counted by an observer.
    final class Changes: Sendable {
        let seen = SharedLog<BudgetChange>()
        let token: ObservationToken

        init(_ monitor: PressureMonitor) {
            let seen = seen
            token = monitor.events.observe { event in
                if case .budgetChanged(let change) = event { seen.append(change) }
            }
        }

        var all: [BudgetChange] { seen.all }

        /// The first change, waiting for it (at most 30 s).
        func first() async -> BudgetChange? {
            await eventually { !all.isEmpty } ? all.first : nil
        }
    }

    enum Move: String, CaseIterable, Sendable {
        case ownLowered, ancestorLowered, raised, removed
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var layout: LiveLimitTree.Layout
        var move: Move
        var testDescription: String { "\(layout) \(move)" }
    }

    static let cases = LiveLimitTree.Layout.allCases.flatMap { layout in Move.allCases.map { Case(layout: layout, move: $0) } }

    @Test(arguments: cases)
    func anAutomaticBudgetFollowsTheLimitWithinOneCheckAndPublishesOneChange(_ testCase: Case) async throws {
        let tree = try LiveLimitTree(testCase.layout)
        let (before, after): (Int?, Int?) = switch testCase.move {
        case .ownLowered, .ancestorLowered: (nil, 2 * Self.gibibyte)
        case .raised: (2 * Self.gibibyte, 4 * Self.gibibyte)
        case .removed: (2 * Self.gibibyte, nil)
        }
        let level: LiveLimitTree.Level = testCase.move == .ancestorLowered ? .ancestor : .own
        try tree.setLimit(before, on: level)
        let budget = try MemoryBudget.resolve(.automatic(ratio: 0.5), limits: tree.limits(physicalBytes: Self.physical))
        #expect(budget.totalBytes == (before ?? Self.physical) / 2)

        let clock = ManualClock()
        let monitor = Self.monitor(tree, budget: budget, checkInterval: .milliseconds(50), clock: clock)
        let changes = Changes(monitor)
        try monitor.start()
        defer { monitor.stop() }
        // The first check, and four more, find the limits the budget was resolved from: no change.
        #expect(await monitor.hasSampledAtTheTimeNow())
        #expect(await clock.step(by: .milliseconds(50), times: 4, sampledBy: monitor))
        #expect(changes.all.isEmpty)

        // Within one check interval of the move: one change.
        try tree.setLimit(after, on: level)
        #expect(await clock.step(by: .milliseconds(50), times: 1, sampledBy: monitor))
        #expect(changes.all.count == 1)
        let change = try #require(changes.all.first)
        #expect(change.previous == budget)
        #expect(change.budget.totalBytes == (after ?? Self.physical) / 2)
        #expect(change.budget.source == .automatic(ratio: 0.5))
        #expect(change.budget.thresholds == budget.thresholds)
        #expect(change.previousLimitBytes == before)
        #expect(change.limitBytes == after)
        #expect(change.limitSource != nil || after == nil)
        #expect(monitor.budget == change.budget)
        // Ten more checks find nothing new to change.
        #expect(await clock.step(by: .milliseconds(50), times: 10, sampledBy: monitor))
        #expect(changes.all.count == 1)
    }

    /// With the checks an hour apart, only the kernel's event can bring the change: a `memory.events`
    /// change on v2, a `memory.pressure_level` notification on v1.
    @Test(arguments: [LiveLimitTree.Layout.v2, .v1])
    func aKernelEventReadsTheLimitAtOnce(_ layout: LiveLimitTree.Layout) async throws {
        let tree = try LiveLimitTree(layout)
        let budget = try MemoryBudget.resolve(.automatic(ratio: 0.5), limits: tree.limits(physicalBytes: Self.physical))
        let targets: ControlGroupEventTargets = layout == .v2
            ? .given(memoryEvents: tree.directory.appending("memory.events"), pressureLevelDirectory: nil)
            : .given(memoryEvents: nil, pressureLevelDirectory: tree.directory)
        let clock = ManualClock()
        let monitor = Self.monitor(tree, budget: budget, checkInterval: .seconds(3600), clock: clock, targets: targets)
        let changes = Changes(monitor)
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }
        #expect(await events.first { $0.sample != nil } != nil)

        // Just short of the hour, with the limit moved: no change, the next check is still ahead.
        try tree.setLimit(2 * Self.gibibyte, on: .own)
        #expect(await clock.step(by: .seconds(3599), times: 1, sampledBy: monitor))
        #expect(changes.all.isEmpty)
        // The kernel's event reads the limit at once (the clock is not stepped again).
        switch layout {
        case .v2:
            try KernelEventWakeTests.overwrite(tree.directory.appending("memory.events"), with: "low 0\nhigh 1\nmax 1\noom 0\noom_kill 0\n")
        case .v1, .hybrid:
            let registered = try KernelEventWakeTests.registeredEventDescriptors(in: tree.directory.appending("cgroup.event_control"))
            KernelEventWakeTests.signal(try #require(registered["low"]))
        }
        let change = try #require(await changes.first())
        #expect(change.budget.totalBytes == Self.gibibyte)
        #expect(changes.all.count == 1)
    }

    @Test func aBudgetGivenInBytesIsLoweredOnlyWhileTheLimitIsBelowItAndSaysSoOnce() async throws {
        let tree = try LiveLimitTree(.v2)
        let budget = try MemoryBudget(totalBytes: 3 * Self.gibibyte, limits: tree.limits(physicalBytes: Self.physical))
        #expect(budget.source == .bytes(3 * Self.gibibyte))
        let (logger, messages) = recordingLogger()
        let clock = ManualClock()
        let monitor = Self.monitor(tree, budget: budget, checkInterval: .milliseconds(50), clock: clock, logger: logger)
        let changes = Changes(monitor)
        try monitor.start()
        defer { monitor.stop() }
        #expect(await monitor.hasSampledAtTheTimeNow())

        // A limit above the budget leaves it, for six checks.
        try tree.setLimit(8 * Self.gibibyte, on: .ancestor)
        #expect(await clock.step(by: .milliseconds(50), times: 6, sampledBy: monitor))
        #expect(changes.all.isEmpty)

        // Below it: at the next check, the limit times the default ratio, said once at warning
        // however many checks follow.
        try tree.setLimit(2 * Self.gibibyte, on: .own)
        #expect(await clock.step(by: .milliseconds(50), times: 1, sampledBy: monitor))
        #expect(changes.all.count == 1)
        let lowered = try #require(changes.all.first)
        #expect(lowered.budget.totalBytes == Int(Double(2 * Self.gibibyte) * MemoryBudget.Source.defaultRatio))
        #expect(lowered.isLoweredToTheLimit)
        #expect(await clock.step(by: .milliseconds(50), times: 6, sampledBy: monitor))
        #expect(messages.messages(atLeast: .warning).filter { $0.contains("exceeds the cgroup's limit") }.count == 1)

        // Raised past the configured bytes again: back to them at the next check.
        try tree.setLimit(nil, on: .own)
        #expect(await clock.step(by: .milliseconds(50), times: 1, sampledBy: monitor))
        #expect(changes.all.count == 2)
        let restored = try #require(changes.all.last)
        #expect(restored.budget == budget)
        #expect(!restored.isLoweredToTheLimit)
        #expect(monitor.budget == budget)
    }

    @Test func withNoCheckIntervalTheBudgetStaysAsConfigured() async throws {
        let tree = try LiveLimitTree(.v2)
        let budget = try MemoryBudget.resolve(.automatic(ratio: 0.5), limits: tree.limits(physicalBytes: Self.physical))
        var configuration = PressureMonitorTests.configuration(budget: budget, sources: [ProcessMemorySampleSource()], interval: .milliseconds(20))
        configuration.limitCheckInterval = nil
        configuration.limitsReader = tree.reader(physicalBytes: Self.physical)
        let monitor = PressureMonitor(configuration: configuration)
        let changes = Changes(monitor)
        let events = monitor.events.stream()
        try tree.setLimit(2 * Self.gibibyte, on: .own)
        try monitor.start()
        defer { monitor.stop() }
        var samples = 0
        for await event in events where event.sample != nil {
            samples += 1
            if samples == 10 { break }
        }
        #expect(changes.all.isEmpty)
        #expect(monitor.budget == budget)
    }

    /// A memory system follows the limit as a whole: the new budget is published on its events,
    /// its target follows, a cache sized by the budget is trimmed to its share at once, and the
    /// footprint, now over the new budget, runs the ladder at once.
    @Test func aSystemFollowsTheLimitWithItsTargetItsCachesAndItsLadder() async throws {
        let tree = try LiveLimitTree(.v2)
        let baseline = try settledResidentBytes()
        try tree.setLimit(baseline + 4 * Self.gibibyte, on: .own)
        let budget = try MemoryBudget.resolve(.automatic(), limits: tree.limits(physicalBytes: Self.physical))
        var configuration = MemorySystem.Configuration(budget: budget, logger: silentLogger)
        configuration.monitor.interval = .milliseconds(10)
        configuration.monitor.stallThresholds = nil
        configuration.monitor.stallTrigger = nil
        configuration.monitor.controlGroupEvents = .none
        configuration.monitor.limitCheckInterval = .milliseconds(50)
        configuration.monitor.limitsReader = tree.reader(physicalBytes: Self.physical)
        let system = try MemorySystem(configuration: configuration)

        // Ten entries of 100 MiB declared cost (payloads elsewhere, kept at every level), at most
        // half the budget: all kept under the first limit.
        let evicted = SharedLog<Int>()
        let sized = try PurgeableCache<Int, Int>(
            name: "sized", category: .custom(name: "kept", onEnteringBackground: .keep, onWarning: .keep, onCritical: .keep),
            budgetFraction: 0.5, onEviction: { key, _ in evicted.append(key) }
        )
        #expect(sized.costLimitInForce == nil)  // until registered
        system.register(sized)
        #expect(sized.costLimitInForce == budget.totalBytes / 2)
        for key in 0..<10 { try sized.setValue(key, forKey: key, cost: 100 * mebibyte) }
        #expect(sized.count == 10)
        // 64 MiB of payloads in the service's heap, emptied at critical.
        let pages = try PurgeableCache<Int, HeapBuffer>(name: "pages", category: .rebuildableObjects, payloadLocation: .appHeap)
        system.register(pages)
        for (key, buffer) in try residentBuffers(in: system.heap(for: .service), totalBytes: 64 * mebibyte).enumerated() {
            try pages.setValue(buffer, forKey: key, cost: buffer.byteCount)
        }

        let events = system.events.stream()
        try await system.running {
            #expect(await eventually { system.monitor.latestSample != nil })
            let footprint = try #require(system.monitor.latestSample?.footprintBytes)
            #expect(system.monitor.level == .normal)
            // The limit lowered to the footprint: the new budget is 90% of it, so it is over budget.
            try tree.setLimit(footprint, on: .own)
            let event = await events.first { if case .budgetChanged = $0 { true } else { false } }
            guard case .budgetChanged(let change) = event else {
                Issue.record("no budget change on the system's events")
                return
            }
            #expect(change.budget.totalBytes == Int(Double(footprint) * 0.9))
            #expect(system.budget == change.budget)
            #expect(system.configuration.budget == budget)
            #expect(system.targetBytes == Int(Double(change.budget.totalBytes) * budget.thresholds.ratios.warningRecovery))
            // The sized cache, trimmed to half the new budget at once, least recently used first.
            let share = change.budget.totalBytes / 2
            #expect(sized.costLimitInForce == share)
            #expect(sized.totalCost <= share)
            #expect(sized.count == share / (100 * mebibyte))
            #expect(evicted.all == Array(0..<(10 - sized.count)))
            // The ladder runs at critical, at once, and empties the heap's pages.
            let run = await events.first { if case .ladderRun(let run) = $0 { run.level == .critical } else { false } }
            #expect(run != nil)
            #expect(pages.count == 0)
        }
        await system.shutDown()
    }
}

