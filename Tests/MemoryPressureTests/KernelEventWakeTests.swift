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
import SystemPackage
import Testing

/// The kernel's cgroup events as wake-ups: a `memory.events` change (v2) and a
/// `memory.pressure_level` notification (v1) wake a monitor whose tick is ten minutes away, on fake
/// cgroup files in a temporary directory. Alone among the suites that run monitors: others count
/// the process's sampling threads.
@Suite(.exclusiveMemoryUse)
struct KernelEventWakeTests {
    static let mebibyte = 1 << 20
    /// Far above this process's footprint, so that the monitor never samples fast on its own.
    static let budget = try! MemoryBudget(totalBytes: 64 << 30, limits: MemoryLimits(physicalBytes: 1 << 40))

    static func memoryEvents(high: Int = 0, oomKill: Int = 0) -> String {
        "low 0\nhigh \(high)\nmax 0\noom \(oomKill)\noom_kill \(oomKill)\n"
    }

    /// A monitor over the real allocator and `/proc/self/statm`, plus `extra` sources, that would
    /// sample once in ten minutes unless an event wakes it, watching `targets` and logging to `logger`.
    static func slowMonitor(
        targets: ControlGroupEventTargets, extra: [any MemorySampleSource] = [], logger: Logger
    ) -> PressureMonitor {
        var configuration = PressureMonitorTests.configuration(
            budget: budget, sources: [ProcessMemorySampleSource(), JemallocSampleSource()] + extra, interval: .seconds(600)
        )
        configuration.fastSamplingGrowthRate = .max
        configuration.controlGroupEvents = targets
        configuration.logger = logger
        return PressureMonitor(configuration: configuration)
    }

    /// Rewrites the file at `path` in place, from its start, as the kernel regenerates a cgroup
    /// file: no truncation to an empty file in between for the monitor to read.
    static func overwrite(_ path: FilePath, with text: String) throws {
        let file = try FileDescriptor.open(path, .writeOnly)
        _ = try file.closeAfter { try file.writeAll(toAbsoluteOffset: 0, text.utf8) }
    }

    @Test func aMemoryEventsChangeWakesTheMonitorBeforeItsTickAndCountsOOMKillsOncePerIncrease() async throws {
        let tree = try FakeCgroupTree()
        try tree.write("app", ["memory.current": "1048576\n", "memory.events": Self.memoryEvents()])
        let directory = tree.root.path.appending("app")
        let (logger, messages) = recordingLogger()
        let monitor = Self.slowMonitor(
            targets: .given(memoryEvents: directory.appending("memory.events"), pressureLevelDirectory: nil),
            extra: [ControlGroupSampleSource(group: ControlGroup(directory: directory))],
            logger: logger
        )
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }
        let first = try #require(await events.first { $0.sample != nil }?.sample)
        #expect(first.cgroupEvents?.oomKill == 0)
        #expect(first.jemalloc != nil && first.residentBytes != nil)

        func sampleAfter(_ text: String) async throws -> MemorySample {
            let written = ContinuousClock.now
            try Self.overwrite(directory.appending("memory.events"), with: text)
            // The next tick is ten minutes away: only the watch can bring a sample taken after the write.
            return try #require(await events.first { $0.sample.map { $0.time >= written } ?? false }?.sample)
        }
        let throttled = try await sampleAfter(Self.memoryEvents(high: 1))
        #expect(throttled.cgroupEvents?.high == 1)
        #expect(throttled.jemalloc != nil)  // a wake-up takes a full sample
        #expect(monitor.oomKillCount == 0)

        let killed = try await sampleAfter(Self.memoryEvents(high: 1, oomKill: 2))
        #expect(killed.cgroupEvents?.oomKill == 2)
        #expect(monitor.oomKillCount == 2)
        _ = try await sampleAfter(Self.memoryEvents(high: 2, oomKill: 2))
        #expect(monitor.oomKillCount == 2)
        _ = try await sampleAfter(Self.memoryEvents(high: 2, oomKill: 3))
        #expect(monitor.oomKillCount == 3)

        let oomLines = messages.all.filter { $0.contains("OOM killer") }
        #expect(oomLines == [
            "the OOM killer ended 2 processes in this service's memory cgroup (memory.events oom_kill 0 -> 2)",
            "the OOM killer ended 1 process in this service's memory cgroup (memory.events oom_kill 2 -> 3)",
        ])
    }

    /// The registrations a v1 watch wrote into a fake `cgroup.event_control`: each level's eventfd.
    static func registeredEventDescriptors(in control: FilePath) throws -> [String: Int32] {
        let file = try FileDescriptor.open(control, .readOnly)
        let text = String(decoding: try file.closeAfter { try file.readToEnd() }, as: UTF8.self)
        var descriptors: [String: Int32] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, let eventDescriptor = Int32(fields[0]), Int32(fields[1]) != nil else { continue }
            descriptors[String(fields[2])] = eventDescriptor
        }
        return descriptors
    }

    /// Signals an eventfd as the kernel does: adds 1 to its counter.
    static func signal(_ eventDescriptor: Int32) {
        var one: UInt64 = 1
        #expect(write(eventDescriptor, &one, MemoryLayout<UInt64>.size) == MemoryLayout<UInt64>.size)
    }

    @Test func aPressureLevelNotificationWakesTheMonitorAndRaisesTheLevelAsStallDoes() async throws {
        let tree = try FakeCgroupTree()
        try tree.write("memory/app", ["memory.pressure_level": "", "cgroup.event_control": ""])
        let directory = tree.root.path.appending("memory/app")
        let (logger, _) = recordingLogger()
        let monitor = Self.slowMonitor(targets: .given(memoryEvents: nil, pressureLevelDirectory: directory), logger: logger)
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }
        #expect(await events.first { $0.sample != nil } != nil)
        #expect(monitor.level == .normal)

        // The watch wrote "<eventfd> <fd of memory.pressure_level> <level>" for each level.
        let registered = try Self.registeredEventDescriptors(in: directory.appending("cgroup.event_control"))
        #expect(Set(registered.keys) == ["low", "medium", "critical"])

        // `low` wakes the monitor but raises nothing.
        let lowSignalled = ContinuousClock.now
        Self.signal(try #require(registered["low"]))
        let woken = await events.first { $0.sample.map { $0.time >= lowSignalled } ?? false }
        #expect(woken != nil)
        #expect(monitor.level == .normal)

        // `critical`, as the kernel sends it with the milder levels' eventfds: critical, with no
        // sample taken in between. The three writes are not one: the monitor may wake between
        // `medium` and `critical` (it did under ThreadSanitizer) and rise to warning first, then to
        // critical on the next wake; it never falls back meanwhile.
        let signalled = ContinuousClock.now
        for level in ["low", "medium", "critical"] { Self.signal(try #require(registered[level])) }
        var rises = [try #require(await events.first { $0.change != nil }?.change)]
        if rises[0].level != .critical, let next = await events.first(where: { $0.change != nil })?.change {
            rises.append(next)
        }
        #expect(rises.map(\.kind).allSatisfy { $0 == .rise }, "\(rises)")
        #expect(rises.last?.level == .critical, "\(rises)")
        #expect(rises.allSatisfy { $0.sample.time >= signalled })
    }

    @Test func aBurstOfKernelEventsBringsSamplesNoFasterThanTheFastInterval() async throws {
        let tree = try FakeCgroupTree()
        try tree.write("memory/app", ["memory.pressure_level": "", "cgroup.event_control": ""])
        let directory = tree.root.path.appending("memory/app")
        let (logger, _) = recordingLogger()
        var configuration = Self.slowMonitor(targets: .given(memoryEvents: nil, pressureLevelDirectory: directory), logger: logger).configuration
        configuration.fastInterval = .milliseconds(100)
        // On a clock the test steps, a millisecond at a time.
        let clock = ManualClock()
        configuration.clock = clock
        let monitor = PressureMonitor(configuration: configuration)
        let events = monitor.events.stream()
        let samples = SharedLog<MemorySample>()
        let counting = monitor.events.observe { event in
            if let sample = event.sample { samples.append(sample) }
        }
        defer { counting.cancel() }
        try monitor.start()
        defer { monitor.stop() }
        let first = try #require(await events.first { $0.sample != nil }?.sample)
        let low = try #require(try Self.registeredEventDescriptors(in: directory.appending("cgroup.event_control"))["low"])

        // `low` at every millisecond, as a v1 cgroup under heavy reclaim signals it, each taken by
        // the monitor at that instant, until four samples more came.
        for _ in 0..<1_000 where samples.all.count < 5 {
            Self.signal(low)
            await monitor.lookedAtTheTimeNow()
            clock.step(by: .milliseconds(1))
        }
        let times = samples.all.prefix(5).map(\.time)
        #expect(times.first == first.time)
        #expect(times.count == 5)
        for (earlier, later) in zip(times, times.dropFirst()) {
            #expect(later - earlier >= .milliseconds(100))
        }
    }

    @Test func aCgroupEventControlThatCannotBeWrittenIsSaidOnceAndTheMonitorGoesOn() async throws {
        let tree = try FakeCgroupTree()
        try tree.write("memory/app", ["memory.pressure_level": ""])
        // A directory in its place: opening it for writing fails, as a read-only cgroup mount does.
        try tree.directory("memory/app/cgroup.event_control")
        let directory = tree.root.path.appending("memory/app")
        let (logger, messages) = recordingLogger()
        let monitor = Self.slowMonitor(targets: .given(memoryEvents: nil, pressureLevelDirectory: directory), logger: logger)
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }
        for _ in 0..<3 {
            let requested = ContinuousClock.now
            monitor.sampleNow()
            #expect(await events.first { $0.sample.map { $0.time >= requested } ?? false } != nil)
        }
        let refusals = messages.messages(atLeast: .notice).filter { $0.contains("memory.pressure_level") }
        #expect(refusals == [
            "memory.pressure_level not armed on \(directory.appending("memory.pressure_level")): "
                + "cannot write \(directory.appending("cgroup.event_control")): Is a directory; the monitor goes on without it",
        ])
    }

    @Test func aMissingMemoryEventsFileIsSaidOnceAndTheMonitorGoesOn() async throws {
        let tree = try FakeCgroupTree()
        let missing = tree.root.path.appending("memory.events")
        let (logger, messages) = recordingLogger()
        let monitor = Self.slowMonitor(targets: .given(memoryEvents: missing, pressureLevelDirectory: nil), logger: logger)
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }
        #expect(await events.first { $0.sample != nil } != nil)
        monitor.sampleNow()
        #expect(await events.first { $0.sample != nil } != nil)
        #expect(messages.messages(atLeast: .notice).filter { $0.contains("memory.events") } == [
            "memory.events watch not armed on \(missing): cannot watch \(missing): No such file or directory; the monitor goes on without it",
        ])
    }
}

/// The v1 notifications on this machine's own memory cgroup, where it has one the process may
/// register on.
struct RealPressureLevelTests {
    @Test func theKernelAcceptsTheRegistrationsAndItsSignalNamesTheLevel() throws {
        let discovery = try ControlGroupDiscovery.current()
        guard case .v1(let group) = discovery.memory else {
            try Test.cancel("this machine's memory controller is not on cgroup v1 (layout \(discovery.layout)): no memory.pressure_level")
        }
        let watch: ControlGroupPressureLevelWatch
        do {
            watch = try ControlGroupPressureLevelWatch(directory: group.directory)
        } catch {
            try Test.cancel("the kernel or the mount refuses the registration here: \(error)")
        }
        print("memory.pressure_level registered on \(group.directory) (layout \(discovery.layout))")
        #expect(watch.descriptors.map(\.level) == [.low, .medium, .critical])
        // The kernel signals an eventfd by adding to its counter; so does this test.
        let medium = try #require(watch.descriptors.first { $0.level == .medium }?.descriptor)
        KernelEventWakeTests.signal(medium)
        var entry = pollfd(fd: medium, events: Int16(POLLIN), revents: 0)
        #expect(poll(&entry, 1, 30_000) == 1)
        #expect(try #require(watch.takeLevel(ready: [medium])) >= .medium)
        #expect(watch.takeLevel(ready: [medium]) == nil)
    }
}
