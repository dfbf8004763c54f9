@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import SystemPackage
import Testing

/// What the kernel's cgroup events mean to the monitor, without a thread or a clock.
struct KernelEventPolicyTests {
    static let budget = try! MemoryBudget(totalBytes: 1000 << 20, limits: MemoryLimits(physicalBytes: 1 << 40))

    @Test func aPressureNoticeHoldsItsLevelForTenSecondsThenFallsAfterTheSettleTime() throws {
        var tracker = PressureLevelTracker(budget: Self.budget, settleTime: .seconds(5))
        let start = ContinuousClock.now
        func sample(after offset: Duration) -> MemorySample {
            MemorySample(time: start + offset, residentBytes: 100 << 20)
        }
        #expect(tracker.update(with: sample(after: .zero)) == nil)

        tracker.notice(.warning, at: Moment(start + .seconds(1)))
        #expect(tracker.update(with: sample(after: .seconds(1)))?.level == .warning)
        tracker.notice(.critical, at: Moment(start + .seconds(2)))
        #expect(tracker.update(with: sample(after: .seconds(2)))?.level == .critical)
        // A milder notice later does not lower a critical one that still holds.
        tracker.notice(.warning, at: Moment(start + .seconds(3)))
        #expect(tracker.update(with: sample(after: .seconds(11))) == nil)
        #expect(tracker.level == .critical)

        // Critical ends at 12 s and warning at 13 s; the fall waits out the settle time from 12 s.
        #expect(tracker.update(with: sample(after: .seconds(12))) == nil)
        #expect(tracker.update(with: sample(after: .seconds(16))) == nil)
        #expect(tracker.level == .critical)
        let settled = tracker.update(with: sample(after: .seconds(17)))
        let fall = try #require(settled)
        #expect(fall.kind == .fall && fall.level == .normal)
    }

    @Test func noticesAreIgnoredWithoutStallThresholdsAsStallIs() {
        var tracker = PressureLevelTracker(budget: Self.budget, stallThresholds: nil)
        let now = ContinuousClock.now
        tracker.notice(.critical, at: Moment(now))
        #expect(tracker.update(with: MemorySample(time: now, residentBytes: 0)) == nil)
        #expect(tracker.level == .normal)
    }

    @Test func v1LevelsRaiseAsStallDoes() {
        typealias Level = ControlGroupPressureLevelWatch.Level
        #expect(Level.allCases.map(\.pressureLevel) == [.normal, .warning, .critical])
        #expect(Level.allCases.map(\.name) == ["low", "medium", "critical"])
        #expect(Level.low < .medium && Level.medium < .critical)
    }

    @Test func oomKillsCountFromTheFirstReadingOn() {
        var counter = OOMKillCounter()
        #expect(counter.record(4) == 0)  // kills before the monitor's first sample are not its to count
        #expect(counter.record(4) == 0)
        #expect(counter.record(6) == 2)
        #expect(counter.record(1) == 0)  // a counter that restarted is a new baseline
        #expect(counter.record(2) == 1)
        #expect(counter.lastReading == 2)
    }

    @Test func v1OOMControlGivesItsOOMKillCount() throws {
        #expect(ControlGroupV1.oomKillCount(inOOMControl: "oom_kill_disable 0\nunder_oom 0\noom_kill 3") == 3)
        #expect(ControlGroupV1.oomKillCount(inOOMControl: "oom_kill_disable 0\nunder_oom 0") == nil)
        #expect(ControlGroupV1.oomKillCount(inOOMControl: "oom_kill -1") == nil)

        let tree = try FakeCgroupTree()
        try tree.write("memory/app", ["memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 7\n"])
        #expect(try ControlGroupV1(directory: tree.root.path.appending("memory/app")).oomKillCount() == 7)
        try tree.write("memory/old", ["memory.oom_control": "oom_kill_disable 0\nunder_oom 0\n"])
        let error = #expect(throws: MemoryPressureError.self) {
            try ControlGroupV1(directory: tree.root.path.appending("memory/old")).oomKillCount()
        }
        #expect(error?.description.contains("memory.oom_control") == true)
    }

    @Test func eachLayoutWatchesItsOwnFiles() {
        let v2 = ControlGroupDiscovery(
            layout: .v2, memory: .v2(ControlGroup(directory: "/sys/fs/cgroup/app"), mountPoint: "/sys/fs/cgroup"),
            unifiedDirectory: "/sys/fs/cgroup/app"
        )
        let onV2 = ControlGroupEventTargets.targets(of: v2)
        #expect(onV2.memoryEvents == .path("/sys/fs/cgroup/app/memory.events"))
        #expect(onV2.pressureLevelDirectory == .off(reason: "cgroup v2 has no memory.pressure_level; PSI takes its place"))

        let hybrid = ControlGroupDiscovery(
            layout: .hybrid, memory: .v1(ControlGroupV1(directory: "/sys/fs/cgroup/memory/app")), unifiedDirectory: "/sys/fs/cgroup/unified"
        )
        let onHybrid = ControlGroupEventTargets.targets(of: hybrid)
        #expect(onHybrid.memoryEvents == .off(reason: "the memory controller is on cgroup v1 (layout hybrid), which has no memory.events"))
        #expect(onHybrid.pressureLevelDirectory == .path("/sys/fs/cgroup/memory/app"))

        let none = ControlGroupDiscovery(layout: .none, memory: nil, reason: "/proc/self/cgroup names no memory cgroup")
        let onNone = ControlGroupEventTargets.targets(of: none)
        #expect(onNone.memoryEvents == .off(reason: "no memory cgroup: /proc/self/cgroup names no memory cgroup"))
        #expect(onNone.pressureLevelDirectory == onNone.memoryEvents)
        #expect(onNone.limitFiles == onNone.memoryEvents)

        let nothing = ControlGroupEventTargets.none.resolved()
        #expect(nothing.memoryEvents == .off(reason: "not configured"))
        #expect(nothing.pressureLevelDirectory == .off(reason: "not configured"))
        #expect(nothing.limitFiles == .off(reason: "not configured"))
    }

    @Test func statusesSayWhatIsArmedAndWhy() {
        let statuses = KernelEventSourceStatus.probe(trigger: nil, targets: .none)
        #expect(statuses.map(\.kind) == KernelEventSourceStatus.Kind.allCases)
        #expect(statuses.allSatisfy { $0.state == .off })
        #expect(statuses.map(\.description) == [
            "PSI trigger off: not configured",
            "memory.events watch off: not configured",
            "memory.pressure_level off: not configured",
            "limit file watch off: not configured",
        ])
        let refused = KernelEventSourceStatus(.pressureLevel, .refused, path: "/x/memory.pressure_level", detail: "cannot write /x/cgroup.event_control: Permission denied")
        #expect(refused.description == "memory.pressure_level not armed on /x/memory.pressure_level: cannot write /x/cgroup.event_control: Permission denied")
    }
}
