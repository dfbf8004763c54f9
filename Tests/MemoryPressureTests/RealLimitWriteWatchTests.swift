#if canImport(Glibc)
import Glibc
#endif
@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
import MemoryPressureTestKit
import MemoryTestSupport
import SystemPackage
import Testing

/// Against the real kernel (issue 37): a write to a real cgroup's limit file, its own or its
/// parent's, wakes a monitor watching it, which changes the budget at the instant of the write on
/// its stepped clock, and takes the write's time from the file. The cgroups are made for the test
/// (a parent and a child, under the process's own v1 memory cgroup or the v2 root) and hold no
/// process, so that a limit far below the process's use is accepted. Needs root and a writable
/// memory hierarchy; cancelled with the reason elsewhere.
@Suite(.exclusiveMemoryUse)
struct RealLimitWriteWatchTests {
    /// A parent and a child memory cgroup of the test's own, removed at the end.
    struct Groups {
        let parent: FilePath
        let child: FilePath
        let memory: MemoryControlGroup
        let limitName: String

        /// Makes them, or cancels the test with why it cannot.
        static func make() throws -> Groups {
            guard geteuid() == 0 else { try Test.cancel("making a memory cgroup takes root") }
            let discovery = try ControlGroupDiscovery.current()
            let base: FilePath
            let limitName: String
            let isVersion2: Bool
            switch discovery.memory {
            case .v1(let group):
                (base, limitName, isVersion2) = (group.directory, "memory.limit_in_bytes", false)
            case .v2(_, let mountPoint):
                (base, limitName, isVersion2) = (mountPoint, "memory.max", true)
            case nil:
                try Test.cancel("no memory cgroup: \(discovery.reason ?? "none found")")
            }
            // A name of its own: the cases run at once.
            let parent = base.appending("memory-pressure-limit-watch-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
            let child = parent.appending("inner")
            guard mkdir(parent.string, 0o755) == 0 else {
                try Test.cancel("cannot make \(parent): \(Errno(rawValue: errno)) (a read-only cgroup mount?)")
            }
            if isVersion2 {
                _ = try? KernelEventWakeTests.overwrite(parent.appending("cgroup.subtree_control"), with: "+memory")
            }
            guard mkdir(child.string, 0o755) == 0 else {
                let failure = Errno(rawValue: errno)
                rmdir(parent.string)
                try Test.cancel("cannot make \(child): \(failure)")
            }
            guard access(child.appending(limitName).string, F_OK) == 0 else {
                rmdir(child.string)
                rmdir(parent.string)
                try Test.cancel("\(child) has no \(limitName): the memory controller is not enabled for it")
            }
            let memory: MemoryControlGroup = isVersion2 ? .v2(ControlGroup(directory: child), mountPoint: base.removingLastComponent())
                : .v1(ControlGroupV1(directory: child))
            return Groups(parent: parent, child: child, memory: memory, limitName: limitName)
        }

        func setLimit(_ bytes: Int, onParent: Bool) throws {
            try KernelEventWakeTests.overwrite((onParent ? parent : child).appending(limitName), with: "\(bytes)\n")
        }

        func remove() {
            rmdir(child.string)
            rmdir(parent.string)
        }
    }

    @Test(arguments: [false, true])
    func aRealLimitWriteChangesTheBudgetAtTheInstantOfTheWrite(onParent: Bool) async throws {
        let groups = try Groups.make()
        defer { groups.remove() }
        let files = groups.memory.limitFiles()
        // The child's and the parent's files come first, then those above them to the root.
        #expect(Array(files.prefix(1)) == [groups.child.appending(groups.limitName)])
        #expect(files.contains(groups.parent.appending(groups.limitName)))

        let discovery = ControlGroupDiscovery(layout: groups.memory.isVersion2 ? .v2 : .v1, memory: groups.memory)
        let physical = 64 << 30
        let budget = try MemoryBudget.resolve(.automatic(), limits: MemoryLimits.reading(discovery, physicalBytes: physical))
        var configuration = PressureMonitorTests.configuration(budget: budget, sources: [ProcessMemorySampleSource()], interval: .seconds(600))
        configuration.fastSamplingGrowthRate = .max
        configuration.limitCheckInterval = .seconds(3600)
        configuration.limitsReader = .reading(discovery, physicalBytes: physical)
        configuration.controlGroupEvents = .given(memoryEvents: nil, pressureLevelDirectory: nil, limitFiles: files)
        let clock = ManualClock()
        configuration.clock = clock
        let monitor = PressureMonitor(configuration: configuration)
        let changes = LiveLimitTests.Changes(monitor)
        try monitor.start()
        defer { monitor.stop() }
        #expect(await monitor.hasSampledAtTheTimeNow())
        #expect(changes.all.isEmpty)

        let limit = 256 << 20
        try groups.setLimit(limit, onParent: onParent)
        await monitor.lookedAtTheTimeNow()
        #expect(changes.all.count == 1)
        let change = try #require(changes.all.first)
        #expect(change.limitBytes == limit)
        #expect(change.budget.totalBytes == Int(Double(limit) * 0.9))
        #expect(change.time == clock.now)
        let written = try LimitWriteWatchTests.modificationTime((onParent ? groups.parent : groups.child).appending(groups.limitName))
        let stamps = try files.map { ($0.string, try LimitWriteWatchTests.modificationTime($0)) }
        #expect(change.limitWriteTime == written, "the files' times: \(stamps)")
        #expect(change.limitWriteDelay != nil)
    }
}

extension MemoryControlGroup {
    var isVersion2: Bool {
        if case .v2 = self { true } else { false }
    }
}
