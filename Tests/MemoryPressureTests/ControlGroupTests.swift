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

#if canImport(Glibc)
import Glibc
#endif

struct ControlGroupTests {
    @Test func findsTheUnifiedEntryOfTheMembership() {
        let hybrid = "4:memory:/user.slice\n1:name=systemd:/user.slice\n0::/user.slice/session-1.scope\n"
        #expect(ControlGroup.unifiedPath(inMembership: hybrid) == "/user.slice/session-1.scope")
        #expect(ControlGroup.unifiedPath(inMembership: "4:memory:/x\n") == nil)
    }

    @Test func findsTheCgroup2Mount() throws {
        let mountInfo = """
            22 1 0:21 / /proc rw,nosuid - proc proc rw
            30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate
            31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
            """
        let mount = try #require(ControlGroup.cgroup2Mount(inMountInfo: mountInfo))
        #expect(mount.root == "/")
        #expect(mount.point == "/sys/fs/cgroup/unified")
        #expect(ControlGroup.cgroup2Mount(inMountInfo: "22 1 0:21 / /proc rw - proc proc rw") == nil)
        let escaped = "30 25 0:26 / /mnt/my\\040cgroups rw - cgroup2 cgroup2 rw"
        #expect(ControlGroup.cgroup2Mount(inMountInfo: escaped)?.point == "/mnt/my cgroups")
    }

    @Test func joinsMountAndRelativePath() {
        #expect(ControlGroup.directory(forRelativePath: "/a/b", mountRoot: "/", mountPoint: "/sys/fs/cgroup")
            == "/sys/fs/cgroup/a/b")
        #expect(ControlGroup.directory(forRelativePath: "/", mountRoot: "/", mountPoint: "/sys/fs/cgroup")
            == "/sys/fs/cgroup")
        #expect(ControlGroup.directory(forRelativePath: "/ns/app", mountRoot: "/ns", mountPoint: "/sys/fs/cgroup")
            == "/sys/fs/cgroup/app")
    }

    @Test func readsMemoryFilesOfADirectory() throws {
        let directory = try TemporaryDirectory()
        try directory.write("memory.current", "123456789\n")
        try directory.write("memory.max", "max\n")
        try directory.write("memory.high", "1073741824\n")
        let group = ControlGroup(directory: directory.path)
        #expect(try group.currentBytes() == 123_456_789)
        #expect(try group.maximum() == .unlimited)
        #expect(try group.high() == .bytes(1 << 30))
    }

    @Test func missingAndGarbageFilesAreTypedErrors() throws {
        let directory = try TemporaryDirectory()
        try directory.write("memory.max", "lots\n")
        let group = ControlGroup(directory: directory.path)
        let missing = #expect(throws: MemoryPressureError.self) { _ = try group.currentBytes() }
        #expect(missing?.code == .measurementUnavailable)
        #expect(missing?.description == "\(directory.path.appending("memory.current")) is not present")
        let malformed = #expect(throws: MemoryPressureError.self) { _ = try group.maximum() }
        #expect(malformed?.code == .measurementFailed)
        #expect(malformed?.description == "\(directory.path.appending("memory.max")) is malformed: \"lots\"")
    }

    @Test func theRealCgroupIsFoundOrItsAbsenceExplained() {
        do {
            let group = try ControlGroup.current()
            #expect(group.directory.string.hasPrefix("/"))
        } catch {
            #expect(!error.description.isEmpty)
        }
    }

    @Test(arguments: [("max", CgroupLimit.unlimited), ("0", .bytes(0)), ("4096", .bytes(4096))])
    func parsesLimits(_ text: String, _ limit: CgroupLimit) {
        #expect(CgroupLimit(parsing: Substring(text)) == limit)
    }

    @Test(arguments: ["", "-1", "1.5", "MAX", "12 "])
    func rejectsMalformedLimits(_ text: String) {
        #expect(CgroupLimit(parsing: Substring(text)) == nil)
    }
}
