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
import MemoryPressureTestKit
import MemoryTestSupport
import SystemPackage
import Testing

/// The kernel's own count: while the process is alone in its memory cgroup (or when configured), the
/// footprint judged is the larger of the process's resident bytes and the cgroup's working set. Over
/// a fake v2 cgroup whose usage is set 100 MiB above the process's resident bytes, with 10 MiB of it
/// inactive page cache; the process's own figure is real (statm). Monitors run here, so the suite
/// takes the process's memory alone.
@Suite(.exclusiveMemoryUse)
struct ControlGroupWorkingSetTests {
    static let mebibyte = 1 << 20

    /// A v2 tree whose `pod/ctr` holds `processes` and charges 100 MiB more than the process's resident
    /// bytes now, 10 MiB of it inactive page cache.
    static func tree(processes: [Int32]) throws -> LiveLimitTree {
        let tree = try LiveLimitTree(.v2)
        let usage = try residentBytes() + 100 * mebibyte
        try LiveLimitTree.replace(tree.directory.appending("memory.current"), with: "\(usage)\n")
        try LiveLimitTree.replace(tree.directory.appending("memory.stat"), with: "anon \(usage)\nfile 0\ninactive_file \(10 * mebibyte)\nactive_file 0\n")
        try setProcesses(processes, in: tree)
        return tree
    }

    static func setProcesses(_ processes: [Int32], in tree: LiveLimitTree) throws {
        try LiveLimitTree.replace(tree.directory.appending("cgroup.procs"), with: processes.map { "\($0)\n" }.joined())
    }

    static func monitor(_ tree: LiveLimitTree, policy: ControlGroupWorkingSetPolicy) -> PressureMonitor {
        let sources: [any MemorySampleSource] = [ProcessMemorySampleSource(), ControlGroupSampleSource(group: ControlGroup(directory: tree.directory))]
        var configuration = PressureMonitorTests.configuration(budget: KernelEventWakeTests.budget, sources: sources, interval: .milliseconds(20))
        configuration.limitCheckInterval = .milliseconds(50)
        configuration.limitsReader = tree.reader(physicalBytes: LiveLimitTests.physical)
        configuration.controlGroupWorkingSet = policy
        return PressureMonitor(configuration: configuration)
    }

    /// Whether a full sample's footprint is the larger of the two figures.
    static func judgesTheWorkingSet(_ sample: MemorySample) -> Bool {
        guard let resident = sample.residentBytes, let workingSet = sample.cgroupWorkingSetBytes else { return false }
        return sample.footprintBytes == max(resident, workingSet)
    }

    @Test func aloneInItsCgroupTheProcessIsJudgedByTheWorkingSetAndByItsOwnOnceItShares() async throws {
        let tree = try Self.tree(processes: [getpid()])
        let monitor = Self.monitor(tree, policy: .whenAlone)
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }

        let judged = try #require(await events.first { $0.sample.map(Self.judgesTheWorkingSet) ?? false }?.sample)
        let workingSet = try #require(judged.cgroupWorkingSetBytes)
        #expect(workingSet == (try ControlGroup(directory: tree.directory).currentBytes()) - 10 * Self.mebibyte)
        #expect(judged.controlGroupExcessBytes == workingSet - (judged.residentBytes ?? 0))
        #expect(judged.controlGroupExcessBytes > 80 * Self.mebibyte)
        #expect(monitor.judgesControlGroupWorkingSet)

        // A second process in the cgroup: its count is no longer the process's.
        try Self.setProcesses([getpid(), 1], in: tree)
        let own = try #require(await events.first { event in
            guard let sample = event.sample, sample.cgroupWorkingSetBytes != nil else { return false }
            return sample.controlGroupExcessBytes == 0
        }?.sample)
        #expect(own.footprintBytes == own.residentBytes)
        #expect(!monitor.judgesControlGroupWorkingSet)
    }

    @Test(arguments: [ControlGroupWorkingSetPolicy.never, .always])
    func theSwitchOverridesWhetherTheProcessIsAlone(_ policy: ControlGroupWorkingSetPolicy) async throws {
        // Alone for `never`, sharing for `always`: the switch decides either way.
        let tree = try Self.tree(processes: policy == .never ? [getpid()] : [getpid(), 1])
        let monitor = Self.monitor(tree, policy: policy)
        let events = monitor.events.stream()
        try monitor.start()
        defer { monitor.stop() }
        // Ten full samples after the first reading of the cgroup's processes.
        var samples: [MemorySample] = []
        for await event in events {
            guard let sample = event.sample, sample.cgroupWorkingSetBytes != nil else { continue }
            samples.append(sample)
            if samples.count == 10 { break }
        }
        let judged = samples.dropFirst().filter(Self.judgesTheWorkingSet).count
        #expect(judged == (policy == .always ? 9 : 0))
        #expect(monitor.judgesControlGroupWorkingSet == (policy == .always))
    }
}
