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

/// A fake `/sys/fs/cgroup` in a temporary directory, with the kernel's file names.
final class FakeCgroupTree {
    let root: TemporaryDirectory

    init() throws {
        root = try TemporaryDirectory()
    }

    /// `root/relative`, made with its parents.
    @discardableResult
    func directory(_ relative: String) throws -> FilePath {
        var made = ""
        for component in relative.split(separator: "/") {
            made += made.isEmpty ? String(component) : "/" + component
            if !Self.exists(root.path.appending(made)) {
                try root.makeDirectory(made)
            }
        }
        return root.path.appending(relative)
    }

    /// Writes `files` (name and text) into `root/relative`, made with its parents.
    func write(_ relative: String, _ files: [String: String]) throws {
        try directory(relative)
        for (name, text) in files {
            try root.write(relative.isEmpty ? name : relative + "/" + name, text)
        }
    }

    func mountPoint(_ relative: String) -> String {
        root.path.appending(relative).string
    }

    /// A mountinfo line of a cgroup2 mount.
    func cgroup2Line(id: Int = 30, root mountRoot: String = "/", at relative: String) -> String {
        "\(id) 25 0:26 \(mountRoot) \(mountPoint(relative)) rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate"
    }

    /// A mountinfo line of a v1 hierarchy with `controllers`.
    func cgroup1Line(id: Int = 31, root mountRoot: String = "/", at relative: String, controllers: String) -> String {
        "\(id) 25 0:27 \(mountRoot) \(mountPoint(relative)) rw,relatime shared:10 - cgroup cgroup rw,\(controllers)"
    }
}

extension FakeCgroupTree {
    static func exists(_ path: FilePath) -> Bool {
        guard let descriptor = try? FileDescriptor.open(path, .readOnly) else { return false }
        try? descriptor.close()
        return true
    }
}

struct ControlGroupDiscoveryTests {
    static let procMount = "22 1 0:21 / /proc rw,nosuid - proc proc rw"

    @Test func v2WithTheMemoryController() throws {
        let tree = try FakeCgroupTree()
        try tree.write("", ["cgroup.controllers": "cpu io memory pids\n"])
        try tree.write("app.slice/svc", ["cgroup.controllers": "memory pids\n"])
        let found = ControlGroupDiscovery.discover(
            membership: "0::/app.slice/svc\n",
            mountInfo: [Self.procMount, tree.cgroup2Line(at: "")].joined(separator: "\n")
        )
        #expect(found.layout == .v2)
        #expect(found.memory == .v2(ControlGroup(directory: tree.root.path.appending("app.slice/svc")), mountPoint: tree.root.path))
        #expect(found.reason == nil)
    }

    @Test func v2MountWithoutTheMemoryControllerIsNone() throws {
        let tree = try FakeCgroupTree()
        try tree.write("", ["cgroup.controllers": "cpu io pids\n"])
        try tree.write("app", ["cgroup.controllers": "cpu pids\n"])
        let found = ControlGroupDiscovery.discover(membership: "0::/app\n", mountInfo: tree.cgroup2Line(at: ""))
        #expect(found.layout == .none)
        #expect(found.memory == nil)
        #expect(found.unifiedDirectory == tree.root.path.appending("app"))
        #expect(found.reason == "\(tree.root.path.appending("app/cgroup.controllers")) does not list memory, and there is no v1 memory hierarchy")
    }

    @Test func v1Alone() throws {
        let tree = try FakeCgroupTree()
        try tree.write("memory/docker/abc", ["memory.usage_in_bytes": "4096\n"])
        let found = ControlGroupDiscovery.discover(
            membership: "12:cpu,cpuacct:/docker/abc\n11:memory:/docker/abc\n1:name=systemd:/docker/abc\n",
            mountInfo: [
                Self.procMount,
                tree.cgroup1Line(id: 32, at: "cpu,cpuacct", controllers: "cpu,cpuacct"),
                tree.cgroup1Line(at: "memory", controllers: "memory"),
            ].joined(separator: "\n")
        )
        #expect(found.layout == .v1)
        #expect(found.memory == .v1(ControlGroupV1(directory: tree.root.path.appending("memory/docker/abc"))))
        #expect(found.unifiedDirectory == nil)
    }

    /// systemd's hybrid mode, as on this project's development machine: memory on v1, a cgroup2
    /// tree at `unified` whose controllers do not include memory.
    @Test func hybrid() throws {
        let tree = try FakeCgroupTree()
        try tree.write("unified", ["cgroup.controllers": "hugetlb\n"])
        try tree.write("memory/process_api/1fca", ["memory.usage_in_bytes": "4096\n"])
        let found = ControlGroupDiscovery.discover(
            membership: "9:name=systemd:/\n4:memory:/process_api/1fca\n1:cpu:/\n0::/\n",
            mountInfo: [
                tree.cgroup1Line(id: 32, at: "cpu", controllers: "cpu"),
                tree.cgroup1Line(at: "memory", controllers: "memory"),
                tree.cgroup1Line(id: 40, at: "systemd", controllers: "name=systemd"),
                tree.cgroup2Line(id: 41, at: "unified"),
            ].joined(separator: "\n")
        )
        #expect(found.layout == .hybrid)
        #expect(found.memory == .v1(ControlGroupV1(directory: tree.root.path.appending("memory/process_api/1fca"))))
        #expect(found.unifiedDirectory == tree.root.path.appending("unified"))
    }

    /// A container that sees a mount of a subtree: the mount root is the process's cgroup, so the
    /// cgroup is the mount point itself, in both versions.
    @Test func nestedMountRoots() throws {
        let tree = try FakeCgroupTree()
        try tree.write("v2", ["cgroup.controllers": "memory\n"])
        try tree.write("v2/child", ["cgroup.controllers": "memory\n"])
        let v2 = ControlGroupDiscovery.discover(
            membership: "0::/kubepods/pod1/ctr\n",
            mountInfo: tree.cgroup2Line(root: "/kubepods/pod1/ctr", at: "v2")
        )
        #expect(v2.memory == .v2(ControlGroup(directory: tree.root.path.appending("v2")), mountPoint: tree.root.path.appending("v2")))
        let child = ControlGroupDiscovery.discover(
            membership: "0::/kubepods/pod1/ctr/child\n",
            mountInfo: tree.cgroup2Line(root: "/kubepods/pod1/ctr", at: "v2")
        )
        #expect(child.memory == .v2(ControlGroup(directory: tree.root.path.appending("v2/child")), mountPoint: tree.root.path.appending("v2")))

        try tree.write("v1", ["memory.usage_in_bytes": "1\n"])
        let v1 = ControlGroupDiscovery.discover(
            membership: "5:memory:/docker/abc\n",
            mountInfo: tree.cgroup1Line(root: "/docker/abc", at: "v1", controllers: "memory")
        )
        #expect(v1.layout == .v1)
        #expect(v1.memory == .v1(ControlGroupV1(directory: tree.root.path.appending("v1"))))
        // A root that only shares a prefix with the path is not its ancestor.
        #expect(ControlGroup.directory(forRelativePath: "/nsx/app", mountRoot: "/ns", mountPoint: "/m") == "/m/nsx/app")
    }

    @Test func noMemoryCgroupIsExplained() {
        let noMount = ControlGroupDiscovery.discover(membership: "4:memory:/x\n", mountInfo: Self.procMount)
        #expect(noMount.layout == .none)
        #expect(noMount.reason == "/proc/self/cgroup names a v1 memory cgroup, but /proc/self/mountinfo has no cgroup mount with the memory controller")
        let noV2Mount = ControlGroupDiscovery.discover(membership: "0::/x\n", mountInfo: Self.procMount)
        #expect(noV2Mount.reason == "/proc/self/cgroup names a cgroup v2, but /proc/self/mountinfo has no cgroup2 mount")
        let nothing = ControlGroupDiscovery.discover(membership: "", mountInfo: "")
        #expect(nothing.layout == .none)
        #expect(nothing.reason == "/proc/self/cgroup names no memory cgroup")
    }

    /// Whatever this machine's layout, discovery finds a memory controller when /proc/self/cgroup
    /// names one (v1) or the process's cgroup2 directory lists it (v2).
    @Test func theRealLayout() throws {
        let found = try ControlGroupDiscovery.current()
        let membership = try KernelFile.read("/proc/self/cgroup")
        let namesV1Memory = membership.split(separator: "\n").contains { $0.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).dropFirst().first?.split(separator: ",").contains("memory") == true }
        if namesV1Memory {
            #expect(found.layout == .v1 || found.layout == .hybrid)
        }
        if found.layout == .none {
            #expect(found.reason != nil)
        } else {
            #expect(found.memory != nil)
        }
        print("cgroup layout on this machine: \(found.layout), memory cgroup \(found.memory.map { $0.directory.string } ?? "none")")
    }
}
