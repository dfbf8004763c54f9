@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import SystemPackage
import Testing

/// Discovery, the effective limit, the automatic budget and the errors, over fake cgroup trees.
struct ControlGroupLimitsTests {
    static let gibibyte = 1 << 30
    static let physical = 16 * gibibyte
    static let v1Unlimited = "9223372036854771712"

    static func v1Stat(limit: String) -> String {
        "cache 0\nrss 4096\nhierarchical_memory_limit \(limit)\ntotal_inactive_file 0\n"
    }

    /// A v2 tree: root (no limit files, as the kernel has it), `kubepods` with `max`/`high`,
    /// `kubepods/pod` with `podMax`, and the process's cgroup `kubepods/pod/ctr` with no limit.
    static func v2Tree(kubepodsMax: String = "max", kubepodsHigh: String = "max", podMax: String = "max") throws -> (FakeCgroupTree, ControlGroupDiscovery) {
        let tree = try FakeCgroupTree()
        try tree.write("", ["cgroup.controllers": "cpu memory pids\n"])
        try tree.write("kubepods", ["cgroup.controllers": "memory\n", "memory.max": kubepodsMax + "\n", "memory.high": kubepodsHigh + "\n"])
        try tree.write("kubepods/pod", ["cgroup.controllers": "memory\n", "memory.max": podMax + "\n", "memory.high": "max\n"])
        try tree.write("kubepods/pod/ctr", ["cgroup.controllers": "memory\n", "memory.max": "max\n", "memory.high": "max\n", "memory.current": "4096\n"])
        let discovery = ControlGroupDiscovery.discover(membership: "0::/kubepods/pod/ctr\n", mountInfo: tree.cgroup2Line(at: ""))
        return (tree, discovery)
    }

    @Test func v2LimitOnAParent() throws {
        let (tree, discovery) = try Self.v2Tree(kubepodsMax: "\(4 * Self.gibibyte)", podMax: "\(2 * Self.gibibyte)")
        #expect(discovery.layout == .v2)
        let pod = tree.root.path.appending("kubepods/pod/memory.max")
        let effective = try #require(discovery.memory).effectiveLimits()
        #expect(effective == EffectiveControlGroupLimits(maximum: SourcedLimit(bytes: 2 * Self.gibibyte, source: ControlGroupLimitSource(path: pod, name: "memory.max"))))
        let limits = MemoryLimits.reading(discovery, physicalBytes: Self.physical)
        #expect(limits.controlGroupLimit == 2 * Self.gibibyte)
        #expect(limits.controlGroupLimitSource?.description == pod.string)
        #expect(limits.origin(of: .automatic()) == pod.string)
        #expect(try MemoryBudget.resolve(.automatic(ratio: 0.5), limits: limits).totalBytes == Self.gibibyte)
        let over = #expect(throws: MemoryPressureError.self) { _ = try MemoryBudget(totalBytes: 3 * Self.gibibyte, limits: limits) }
        #expect(over?.description == "memory budget of 3 GiB (3221225472 bytes) exceeds the cgroup's memory.max of 2 GiB (2147483648 bytes); expected between 1 byte and 2147483648 bytes")
    }

    @Test func v2HighOnAGrandparentBelowEveryMax() throws {
        let (tree, discovery) = try Self.v2Tree(kubepodsHigh: "\(Self.gibibyte)", podMax: "\(2 * Self.gibibyte)")
        let limits = MemoryLimits.reading(discovery, physicalBytes: Self.physical)
        #expect(limits.controlGroupMaximum == 2 * Self.gibibyte)
        #expect(limits.controlGroupHigh == Self.gibibyte)
        #expect(limits.controlGroupLimitSource == ControlGroupLimitSource(path: tree.root.path.appending("kubepods/memory.high"), name: "memory.high"))
        #expect(try MemoryBudget.resolve(.automatic(ratio: 1), limits: limits).totalBytes == Self.gibibyte)
    }

    @Test func v2UnlimitedAllTheWayUp() throws {
        let (_, discovery) = try Self.v2Tree()
        #expect(try #require(discovery.memory).effectiveLimits() == EffectiveControlGroupLimits())
        let limits = MemoryLimits.reading(discovery, physicalBytes: Self.physical)
        #expect(limits.controlGroupLimit == nil)
        #expect(limits.origin(of: .automatic()) == "physical memory")
        #expect(try MemoryBudget.resolve(.automatic(ratio: 0.5), limits: limits).totalBytes == Self.physical / 2)
    }

    /// The walk stops at the mount point: a nested container sees its own cgroup as the root.
    @Test func v2NestedRootStopsTheWalkAtTheMountPoint() throws {
        let tree = try FakeCgroupTree()
        try tree.write("", ["memory.max": "1024\n"])  // outside the mount: never read
        try tree.write("ns", ["cgroup.controllers": "memory\n", "memory.max": "\(3 * Self.gibibyte)\n", "memory.high": "max\n"])
        try tree.write("ns/app", ["cgroup.controllers": "memory\n", "memory.max": "max\n", "memory.high": "max\n"])
        let discovery = ControlGroupDiscovery.discover(membership: "0::/pods/p/app\n", mountInfo: tree.cgroup2Line(root: "/pods/p", at: "ns"))
        let limits = MemoryLimits.reading(discovery, physicalBytes: Self.physical)
        #expect(limits.controlGroupMaximum == 3 * Self.gibibyte)
        #expect(limits.controlGroupMaximumSource?.path == tree.root.path.appending("ns/memory.max"))
    }

    @Test func v2MalformedLimitOnAParentIsTheError() throws {
        let (tree, discovery) = try Self.v2Tree(kubepodsMax: "lots")
        let error = #expect(throws: MemoryPressureError.self) { _ = try #require(discovery.memory).effectiveLimits() }
        #expect(error?.description == "\(tree.root.path.appending("kubepods/memory.max")) is malformed: \"lots\"")
        let limits = MemoryLimits.reading(discovery, physicalBytes: Self.physical)
        #expect(limits.controlGroupLimit == nil)
        let budget = #expect(throws: MemoryPressureError.self) { _ = try MemoryBudget.resolve(.controlGroup(), limits: limits) }
        #expect(budget?.code == .noControlGroupLimit)
    }

    @Test func v2MountWithoutTheMemoryControllerHasNoLimit() throws {
        let tree = try FakeCgroupTree()
        try tree.write("", ["cgroup.controllers": "hugetlb\n", "memory.max": "1024\n"])
        let discovery = ControlGroupDiscovery.discover(membership: "0::/\n", mountInfo: tree.cgroup2Line(at: ""))
        #expect(discovery.layout == .none)
        let limits = MemoryLimits.reading(discovery, physicalBytes: Self.physical)
        #expect(limits == MemoryLimits(physicalBytes: Self.physical))
        #expect(try MemoryBudget.resolve(.automatic(ratio: 1), limits: limits).totalBytes == Self.physical)
    }

    /// v1 and hybrid take `hierarchical_memory_limit`, which the kernel keeps as the smallest
    /// limit to the root, not the cgroup's own `memory.limit_in_bytes`.
    @Test(arguments: [false, true])
    func v1AndHybridUseTheHierarchicalLimit(hybrid: Bool) throws {
        let tree = try FakeCgroupTree()
        try tree.write("unified", ["cgroup.controllers": "\n"])
        try tree.write("memory/docker/abc", [
            "memory.usage_in_bytes": "4096\n",
            "memory.limit_in_bytes": "\(Self.v1Unlimited)\n",
            "memory.stat": Self.v1Stat(limit: "\(Self.gibibyte)"),
        ])
        let mounts = [tree.cgroup1Line(at: "memory", controllers: "memory")] + (hybrid ? [tree.cgroup2Line(at: "unified")] : [])
        let discovery = ControlGroupDiscovery.discover(
            membership: "4:memory:/docker/abc\n" + (hybrid ? "0::/\n" : ""),
            mountInfo: mounts.joined(separator: "\n")
        )
        #expect(discovery.layout == (hybrid ? .hybrid : .v1))
        let stat = tree.root.path.appending("memory/docker/abc/memory.stat")
        let limits = MemoryLimits.reading(discovery, physicalBytes: Self.physical)
        #expect(limits.controlGroupMaximum == Self.gibibyte)
        #expect(limits.controlGroupHigh == nil)
        #expect(limits.origin(of: .automatic()) == "\(stat) (hierarchical_memory_limit)")
        #expect(try MemoryBudget.resolve(.automatic(ratio: 0.5), limits: limits).totalBytes == Self.gibibyte / 2)
        let over = #expect(throws: MemoryPressureError.self) { _ = try MemoryBudget(totalBytes: 2 * Self.gibibyte, limits: limits) }
        #expect(over?.description == "memory budget of 2 GiB (2147483648 bytes) exceeds the cgroup's hierarchical_memory_limit of 1 GiB (1073741824 bytes); expected between 1 byte and 1073741824 bytes")
    }

    @Test func v1UnlimitedIsNoLimit() throws {
        let tree = try FakeCgroupTree()
        try tree.write("memory/a", ["memory.stat": Self.v1Stat(limit: Self.v1Unlimited)])
        let discovery = ControlGroupDiscovery.discover(membership: "4:memory:/a\n", mountInfo: tree.cgroup1Line(at: "memory", controllers: "memory"))
        #expect(try #require(discovery.memory).effectiveLimits() == EffectiveControlGroupLimits())
        let limits = MemoryLimits.reading(discovery, physicalBytes: Self.physical)
        #expect(limits.controlGroupLimit == nil)
        #expect(try MemoryBudget.resolve(.automatic(ratio: 1), limits: limits).totalBytes == Self.physical)
    }

    @Test func v1MalformedStatIsTheError() throws {
        let tree = try FakeCgroupTree()
        try tree.write("memory/a", ["memory.stat": "hierarchical_memory_limit lots\n"])
        let discovery = ControlGroupDiscovery.discover(membership: "4:memory:/a\n", mountInfo: tree.cgroup1Line(at: "memory", controllers: "memory"))
        let error = #expect(throws: MemoryPressureError.self) { _ = try #require(discovery.memory).effectiveLimits() }
        #expect(error?.code == .measurementFailed)
        #expect(error?.description == "\(tree.root.path.appending("memory/a/memory.stat")) is malformed: \"hierarchical_memory_limit lots\\n\"")
        #expect(MemoryLimits.reading(discovery, physicalBytes: Self.physical).controlGroupLimit == nil)
    }

    /// On this machine, whatever its layout, the limits come from the memory cgroup discovery finds.
    @Test func theRealMachinesLimitsFollowDiscovery() throws {
        let discovery = try ControlGroupDiscovery.current()
        let limits = MemoryLimits.current()
        let expected = try discovery.memory?.effectiveLimits()
        #expect(limits.controlGroupMaximum == expected?.maximum?.bytes)
        #expect(limits.controlGroupHigh == expected?.high?.bytes)
        #expect(limits.controlGroupMaximumSource == expected?.maximum?.source)
    }
}
