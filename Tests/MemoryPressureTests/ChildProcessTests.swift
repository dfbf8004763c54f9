#if canImport(Glibc)
import Glibc
#endif
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import SystemPackage
import Testing

/// Child processes against the real kernel: spawn, pidfd, exits, `oom_score_adj`, every freezer,
/// the kill, footprints and bad specifications. Tests that need a cgroup the machine cannot make,
/// or a program it lacks, are cancelled with the reason.
@Suite(.serialized)
struct ChildProcessTests {
    /// The parents this machine offers for children's cgroups (found once per process).
    static let parents = ChildControlGroupParents.current

    // MARK: Spawn, pidfd, exits

    @Test func anExitStatusIsReportedThroughThePidfd() throws {
        let child = try ChildProcess.spawn(.shell("exit 3"))
        #expect(child.pid > 0)
        #expect(child.exitDescriptor != nil, "the kernel here has pidfds")
        let termination = try #require(child.waitForExit(timeout: .seconds(30)))
        #expect(termination.exit == .exited(status: 3))
        #expect(!termination.killedByUs)
        #expect(termination.wasKilledByKernelOOMKiller == false)
        #expect(child.pollExit() == termination, "a reaped child keeps its termination")
    }

    @Test(arguments: [true, false])
    func bothWaysOfMakingTheChildJoinItsCgroupsBeforeItRuns(clone3: Bool) async throws {
        var options = ChildProcessOptions()
        options.triesClone3 = clone3
        let directory = try TemporaryDirectory()
        let output = directory.path.appending("cgroup").string
        let child = try ChildProcess.spawn(.shell("cat /proc/self/cgroup > \(output); exec sleep 30"), options: options)
        defer { child.kill() }
        #expect(child.madeWithClone3 == clone3)
        #expect(child.exitDescriptor != nil, "a pidfd either way (pidfd_open after the plain clone)")
        #expect(await eventually { Self.size(output) > 0 })
        // What the shell's first command saw: it was in its cgroups already.
        let membership = try KernelFile.read(FilePath(output))
        for directory in child.controlGroupDirectories {
            #expect(membership.contains(directory.lastComponent!.string), "\(membership)")
        }
        #expect(child.kill()?.exit.isKill == true)
    }

    @Test func aChildRunsInItsOwnProcessGroupWithItsArgumentsAndEnvironment() throws {
        let directory = try TemporaryDirectory()
        let output = directory.path.appending("out").string
        let child = try ChildProcess.spawn(
            ProcessSpecification(
                executable: "sh",  // found in PATH
                arguments: ["-c", "echo \"$0 $GREETING $(pwd)\" > \(output); cut -d' ' -f5 /proc/$$/stat >> \(output)", "zero"],
                environment: ["GREETING": "hello", "PATH": "/usr/bin:/bin"],
                workingDirectory: directory.path
            )
        )
        let termination = try #require(child.waitForExit(timeout: .seconds(30)))
        #expect(termination.exit == .exited(status: 0))
        let lines = try KernelFile.read(FilePath(output)).split(separator: "\n").map(String.init)
        #expect(lines.first == "zero hello \(directory.path.string)")
        #expect(lines.dropFirst().first == "\(child.pid)", "the child leads its own process group")
    }

    @Test func theChildInheritsTheDescriptorsGivenAndNoOthers() throws {
        var ends: (Int32, Int32) = (-1, -1)
        try withUnsafeMutableBytes(of: &ends) { buffer in
            guard pipe(buffer.baseAddress!.assumingMemoryBound(to: Int32.self)) == 0 else { throw Errno(rawValue: errno) }
        }
        defer { close(ends.0) }
        // Open without close-on-exec: a posix_spawn child would inherit it.
        let stray = open("/dev/null", O_RDONLY)
        #expect(stray > 2)
        defer { close(stray) }
        let child = try ChildProcess.spawn(
            .shell("echo hello >&3; if [ -e /proc/$$/fd/\(stray) ]; then echo leaked >&3; else echo closed >&3; fi"),
            options: ChildProcessOptions(inheritedDescriptors: [ends.1])
        )
        close(ends.1)
        let termination = try #require(child.waitForExit(timeout: .seconds(30)))
        #expect(termination.exit == .exited(status: 0))
        let output = String(decoding: try FileDescriptor(rawValue: ends.0).readToEnd(), as: UTF8.self)
        #expect(output == "hello\nclosed\n")

        let error = try #require(throws: MemoryPressureError.self) {
            try ChildProcess.spawn(ProcessSpecification(executable: "/bin/true"), options: ChildProcessOptions(inheritedDescriptors: [9999]))
        }
        #expect(error.code == .invalidConfiguration)
        #expect(error.description.contains("each open in this process"))
    }

    @Test func sigtermIsReportedAsTheSignalThatEndedIt() throws {
        let child = try ChildProcess.spawn(ProcessSpecification(executable: "/bin/sleep", arguments: ["30"]))
        #expect(child.pollExit() == nil, "it runs")
        try child.signal(SIGTERM)
        let termination = try #require(child.waitForExit(timeout: .seconds(30)))
        #expect(termination.exit == .signaled(SIGTERM, coreDumped: false))
        #expect(!termination.exit.isKill)
        #expect(!termination.killedByUs)
    }

    @Test func aSigkillFromElsewhereIsAKillNotOurs() throws {
        let child = try ChildProcess.spawn(ProcessSpecification(executable: "/bin/sleep", arguments: ["30"]))
        try child.signal(SIGKILL)
        let termination = try #require(child.waitForExit(timeout: .seconds(30)))
        #expect(termination.exit == .signaled(SIGKILL, coreDumped: false))
        #expect(termination.exit.isKill)
        #expect(!termination.killedByUs)
        if child.memoryMechanism != .residentSet {
            #expect(termination.controlGroupOOMKills == 0)
            #expect(termination.wasKilledByKernelOOMKiller == false, "its cgroup's oom_kill did not rise")
        } else {
            #expect(termination.wasKilledByKernelOOMKiller == nil, "without a cgroup of its own it cannot be told")
        }
    }

    @Test func killThroughThePidfdReapsItAndRemovesItsCgroups() throws {
        let child = try ChildProcess.spawn(ProcessSpecification(executable: "/bin/sleep", arguments: ["30"]))
        let directories = child.controlGroupDirectories
        for directory in directories {
            let members = try KernelFile.read(directory.appending("cgroup.procs"))
            #expect(members.split(separator: "\n").contains("\(child.pid)"), "the child is in \(directory) from its start")
        }
        let termination = try #require(child.kill())
        #expect(termination.exit == .signaled(SIGKILL, coreDumped: false))
        #expect(termination.killedByUs)
        #expect(termination.wasKilledByKernelOOMKiller == false)
        for directory in directories {
            #expect(access(directory.string, F_OK) != 0, "\(directory) is removed once the child is reaped")
        }
        var status: Int32 = 0
        #expect(waitpid(child.pid, &status, WNOHANG) == -1 && errno == ECHILD, "no zombie is left to reap")
        let error = try #require(throws: MemoryPressureError.self) { try child.signal(SIGTERM) }
        #expect(error.code == .appNotRunning)
        #expect(child.kill() == termination, "a second kill returns the same termination")
    }

    @Test func theChildHasItsOwnCgroupsWhereTheMachineCanMakeThem() throws {
        let child = try ChildProcess.spawn(ProcessSpecification(executable: "/bin/sleep", arguments: ["30"]))
        defer { child.kill() }
        #expect(child.memoryMechanism == Self.parents.memoryMechanism)
        #expect(child.freezeMechanism == Self.parents.automaticFreezeMechanism)
        guard Self.parents.memory != nil || Self.parents.freezerV2 != nil || Self.parents.freezerV1 != nil else {
            try Test.cancel("no child cgroup can be made here: \(Self.parents.memoryReason ?? ""); \(Self.parents.freezerV2Reason ?? ""); \(Self.parents.freezerV1Reason ?? "")")
        }
        let membership = try KernelFile.read(FilePath("/proc/\(child.pid)/cgroup"))
        for directory in child.controlGroupDirectories {
            #expect(membership.contains(directory.lastComponent!.string), "/proc/\(child.pid)/cgroup names \(directory)")
        }
    }

    // MARK: oom_score_adj

    @Test func oomScoreAdjustmentIsWrittenAndReadBack() throws {
        let child = try ChildProcess.spawn(ProcessSpecification(executable: "/bin/sleep", arguments: ["30"]))
        defer { child.kill() }
        try child.setOOMScoreAdjustment(500)
        #expect(try child.oomScoreAdjustment() == 500)
        try child.setOOMScoreAdjustment(1000)
        #expect(try KernelFile.read(FilePath("/proc/\(child.pid)/oom_score_adj")) == "1000\n")
        // Lowering it below what the child inherited takes CAP_SYS_RESOURCE; without it the kernel
        // refuses, and the error says so.
        if Self.hasCapability(24) {  // CAP_SYS_RESOURCE
            try child.setOOMScoreAdjustment(-1000)
            #expect(try child.oomScoreAdjustment() == -1000)
        } else {
            let error = try #require(throws: MemoryPressureError.self) { try child.setOOMScoreAdjustment(-1000) }
            #expect(error.errno == .permissionDenied || error.errno == .notPermitted)
            #expect(error.description.contains("cannot set oom_score_adj to -1000"))
            #expect(try child.oomScoreAdjustment() == 1000, "unchanged")
        }
        for value in [1001, -1001, Int.max] {
            let error = try #require(throws: MemoryPressureError.self) { try child.setOOMScoreAdjustment(value) }
            #expect(error.code == .invalidArgument)
            #expect(error.description == "oom_score_adj of \(value) is out of range; expected -1000 to 1000")
        }
    }

    /// Whether the calling process holds the capability numbered `capability` (its bit in
    /// `/proc/self/status`'s `CapEff`).
    static func hasCapability(_ capability: Int) -> Bool {
        let status = (try? KernelFile.read("/proc/self/status")) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
              let mask = UInt64(line.dropFirst("CapEff:".count).trimmingSuffix(while: \.isWhitespace).drop { $0 == "\t" || $0 == " " }, radix: 16)
        else { return false }
        return mask & (1 << UInt64(capability)) != 0
    }

    // MARK: Freezing

    /// A child that appends a line to `file` about every 10 ms.
    static func appender(_ file: String) -> ProcessSpecification {
        .shell("while :; do echo x >> \(file); sleep 0.01; done")
    }

    static func size(_ file: String) -> Int {
        var status = stat()
        return stat(file, &status) == 0 ? Int(status.st_size) : 0
    }

    /// A child frozen by `mechanism`, and its output file; cancels the test where the machine lacks it.
    static func spawnAppender(_ mechanism: FreezeMechanism, in directory: TemporaryDirectory) throws -> (ChildProcess, String) {
        let file = directory.path.appending("progress").string
        let spawned = Result { () throws(MemoryPressureError) in
            try ChildProcess.spawn(appender(file), options: ChildProcessOptions(freezeMechanism: mechanism))
        }
        if case .failure(let error) = spawned, error.description.contains("is not available here") {
            try Test.cancel("\(error)")
        }
        return (try spawned.get(), file)
    }

    // One test per freezer (not one parameterized test), so that a freezer this machine lacks shows
    // as a cancelled test with its reason.
    @Test func theCgroupV2FreezerStopsTheChildAndThawResumesIt() async throws {
        try await freezeStopsTheChildAndThawResumesIt(.controlGroupV2)
    }

    @Test func theCgroupV1FreezerStopsTheChildAndThawResumesIt() async throws {
        try await freezeStopsTheChildAndThawResumesIt(.controlGroupV1)
    }

    @Test func sigstopToTheProcessGroupStopsTheChildAndSigcontResumesIt() async throws {
        try await freezeStopsTheChildAndThawResumesIt(.stopSignal)
    }

    @Test func aChildFrozenByTheCgroupV2FreezerIsKilledAtOnce() throws {
        try aFrozenChildIsKilledAtOnce(.controlGroupV2)
    }

    @Test func aChildFrozenByTheCgroupV1FreezerIsKilledAtOnce() throws {
        try aFrozenChildIsKilledAtOnce(.controlGroupV1)
    }

    @Test func aChildStoppedBySigstopIsKilledAtOnce() throws {
        try aFrozenChildIsKilledAtOnce(.stopSignal)
    }

    func freezeStopsTheChildAndThawResumesIt(_ mechanism: FreezeMechanism) async throws {
        let directory = try TemporaryDirectory()
        let (child, file) = try Self.spawnAppender(mechanism, in: directory)
        defer { child.kill() }
        #expect(child.freezeMechanism == mechanism)
        #expect(await eventually { Self.size(file) > 0 }, "the child makes progress")

        try child.freeze()
        #expect(child.isFrozen)
        if mechanism == .stopSignal {
            let state = try child.processState()
            #expect(state == "T" || state == "D", "stopped, or waiting for a vfork child that is stopped: \(state)")
        } else if let freezer = child.controlGroupDirectories.last {
            let state = try KernelFile.read(freezer.appending(mechanism == .controlGroupV2 ? "cgroup.events" : "freezer.state"))
            #expect(state.contains(mechanism == .controlGroupV2 ? "frozen 1" : "FROZEN"))
        }
        let frozenSize = Self.size(file)
        // A window in which a running child would append about 20 lines; a frozen one appends none.
        // The kernel's own time is the subject (a real child, frozen by the kernel): a fixed sleep.
        try await Task.sleep(for: .milliseconds(200))
        #expect(Self.size(file) == frozenSize, "no progress while frozen")
        #expect(child.pollExit() == nil, "frozen, not ended")

        try child.thaw()
        #expect(!child.isFrozen)
        #expect(await eventually { Self.size(file) > frozenSize }, "progress again after thaw")
        #expect(try child.processState() != "T")
    }

    func aFrozenChildIsKilledAtOnce(_ mechanism: FreezeMechanism) throws {
        let directory = try TemporaryDirectory()
        let (child, _) = try Self.spawnAppender(mechanism, in: directory)
        let directories = child.controlGroupDirectories
        try child.freeze()
        let termination = try #require(child.kill(timeout: .seconds(30)), "a frozen child dies when killed")
        #expect(termination.exit.isKill)
        #expect(termination.killedByUs)
        for directory in directories {
            #expect(access(directory.string, F_OK) != 0, "\(directory) is removed, with the shell's own children")
        }
    }

    @Test func aFreezerTheMachineLacksIsAClearError() throws {
        guard let (mechanism, reason) = [
            (FreezeMechanism.controlGroupV2, Self.parents.freezerV2Reason),
            (.controlGroupV1, Self.parents.freezerV1Reason),
        ].first(where: { $0.1 != nil }) else {
            try Test.cancel("both freezer cgroups are available here")
        }
        let error = try #require(throws: MemoryPressureError.self) {
            try ChildProcess.spawn(Self.appender("/dev/null"), options: ChildProcessOptions(freezeMechanism: mechanism))
        }
        #expect(error.code == .invalidConfiguration)
        #expect(error.description == "the freezer \(mechanism) is not available here: \(reason!)")
    }

    // MARK: Footprint

    // The footprints of real children are ``ProcessFootprintTests``: they hold the memory tests'
    // turn, last in this chain.

    @Test func aMemoryLimitOutOfRangeOrWithoutACgroupIsAClearError() throws {
        let tooSmall = try #require(throws: MemoryPressureError.self) {
            try ChildProcess.spawn(ProcessSpecification(executable: "/bin/true"), options: ChildProcessOptions(memoryLimitBytes: 1000))
        }
        #expect(tooSmall.code == .invalidConfiguration)
        #expect(tooSmall.description == "per-child memory limit of 1000 bytes is out of range; expected 1048576 bytes or more")
        let withoutGroup = try #require(throws: MemoryPressureError.self) {
            try ChildProcess.spawn(
                ProcessSpecification(executable: "/bin/true"),
                options: ChildProcessOptions(usesMemoryControlGroup: false, memoryLimitBytes: 64 << 20)
            )
        }
        #expect(withoutGroup.description.hasPrefix("a per-child memory limit needs a memory cgroup of its own"))
        #expect(Self.leftoverGroups() == [])
    }

    /// Whether `pid` is gone (or a zombie waiting for its new parent to reap it).
    static func isGone(_ pid: Int32) -> Bool {
        guard let stat = try? KernelFile.read(FilePath("/proc/\(pid)/stat")), let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].dropFirst().first == "Z"
    }

    @Test(arguments: [true, false])
    func killEndsWhatTheChildStartedToo(withControlGroups: Bool) async throws {
        let directory = try TemporaryDirectory()
        let file = directory.path.appending("grandchild").string
        let options = withControlGroups
            ? ChildProcessOptions()
            : ChildProcessOptions(freezeMechanism: .stopSignal, usesMemoryControlGroup: false)
        let child = try ChildProcess.spawn(.shell("sleep 300 & echo $! > \(file).tmp; mv \(file).tmp \(file); wait"), options: options)
        #expect(withControlGroups || child.controlGroupDirectories.isEmpty)
        #expect(await eventually { access(file, F_OK) == 0 })
        let grandchild = try #require(Int32(try KernelFile.read(FilePath(file)).trimmingSuffix(while: \.isWhitespace)))
        #expect(!Self.isGone(grandchild), "the grandchild runs")
        let termination = try #require(child.kill())
        #expect(termination.exit.isKill)
        #expect(await eventually { Self.isGone(grandchild) }, "the grandchild \(grandchild) is killed with its parent")
        #expect(Self.leftoverGroups() == [])
    }

    @Test func pssIsParsedFromASmapsRollupText() {
        let text = """
        55d0c0a4e000-7ffd5b1f9000 ---p 00000000 00:00 0                          [rollup]
        Rss:               69120 kB
        Pss:               66211 kB
        Pss_Dirty:         65600 kB

        """
        #expect(ChildMemoryReader.proportionalSetBytes(inRollup: Array(text.utf8)) == 66211 * 1024)
        #expect(ChildMemoryReader.proportionalSetBytes(inRollup: Array("Rss: 1 kB\n".utf8)) == nil)
    }

    @Test func swapIsParsedFromAVersion1StatText() throws {
        let text = "total_inactive_file 4096\nhierarchical_memory_limit 1073741824\ntotal_swap 8192\ntotal_swapcached 12288\n"
        let statistics = try #require(ControlGroupV1Statistics(parsing: Array(text.utf8)))
        #expect(statistics.totalSwapBytes == 8192, "total_swap, not total_swapcached")
        let noSwapAccounting = try #require(ControlGroupV1Statistics(parsing: Array("total_inactive_file 0\nhierarchical_memory_limit 1\n".utf8)))
        #expect(noSwapAccounting.totalSwapBytes == 0)
    }

    // MARK: Where children's cgroups go

    @Test func theV1FreezerDirectoryIsFoundFromMembershipAndMounts() {
        let membership = "6:freezer:/jobs/a\n4:memory:/process_api/x\n0::/\n"
        let mountInfo = """
        30 25 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw
        35 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
        36 30 0:32 /jobs /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
        40 30 0:35 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
        """
        #expect(
            ChildControlGroupParents.version1Directory(controller: "freezer", membership: membership, mountInfo: mountInfo)
                == "/sys/fs/cgroup/freezer/a",
            "the mount's root (/jobs) is taken off the membership's path"
        )
        #expect(ChildControlGroupParents.version1Directory(controller: "memory", membership: membership, mountInfo: mountInfo)
            == "/sys/fs/cgroup/memory/process_api/x")
        #expect(ChildControlGroupParents.version1Directory(controller: "freezer", membership: "0::/\n", mountInfo: mountInfo) == nil)
        #expect(ChildControlGroupParents.version1Directory(controller: "pids", membership: "8:pids:/\n", mountInfo: mountInfo) == nil)
    }

    @Test func theMechanismsFollowWhatCanBeMade() {
        var parents = ChildControlGroupParents()
        #expect(parents.automaticFreezeMechanism == .stopSignal)
        #expect(parents.memoryMechanism == .residentSet)
        parents.freezerV1 = "/sys/fs/cgroup/freezer"
        #expect(parents.automaticFreezeMechanism == .controlGroupV1)
        parents.freezerV2 = "/sys/fs/cgroup"
        #expect(parents.automaticFreezeMechanism == .controlGroupV2, "v2 first")
        parents.memory = .init(directory: "/sys/fs/cgroup/memory/x", isVersion2: false)
        #expect(parents.memoryMechanism == .controlGroupV1)
        parents.memory = .init(directory: "/sys/fs/cgroup", isVersion2: true)
        #expect(parents.memoryMechanism == .controlGroupV2)
    }

    @Test func theSweepRemovesTheCgroupsOfADeadMakerAndKeepsALiveOnes() throws {
        guard let parent = Self.parents.freezerV2 ?? Self.parents.freezerV1 ?? Self.parents.memory?.directory else {
            try Test.cancel("no child cgroup can be made here: \(Self.parents.freezerV2Reason ?? "")")
        }
        // A process that has ended, whose pid stands for a maker no longer alive.
        let ended = try ChildProcess.spawn(.shell("exit 0"))
        _ = try #require(ended.waitForExit(timeout: .seconds(30)))

        // The sweep, in a parent of this test's own: a host process of another test, finding its
        // parents at the same time, sweeps the real ones (one removed this test's leftover there
        // first, in a CI run), and never this one.
        let own = parent.appending("leftover-sweep-test-\(getpid())-\(UInt32.random(in: 0 ... .max))")
        #expect(mkdir(own.string, 0o755) == 0, "\(own)")
        defer { rmdir(own.string) }
        let leftover = own.appending("memory-pressure-child-\(ended.pid)-1")
        let ours = own.appending("memory-pressure-child-\(getpid())-999999")
        for directory in [leftover, ours] {
            #expect(mkdir(directory.string, 0o755) == 0, "\(directory)")
        }
        defer { rmdir(ours.string) }
        let swept = ChildControlGroupParents.removeLeftovers(in: own)
        #expect(swept.removed == [leftover] && swept.emptied.isEmpty, "\(swept)")
        #expect(access(leftover.string, F_OK) != 0, "a dead process's empty cgroup is removed")
        #expect(access(ours.string, F_OK) == 0, "a live process's cgroup stays")
        // That finding the parents sweeps them is `HostEndTests.theNextHostSweeps…`'s to show, in
        // a host process: a discovery here would sweep the real parents under that test's feet.
    }

    // MARK: Bad specifications

    /// The zombies among our children that still carry our own name: a child that failed before
    /// exec and was never reaped.
    static func unreapedForks() -> Int {
        let ourName = (try? KernelFile.read("/proc/self/comm")) ?? ""
        var count = 0
        guard let entries = opendir("/proc") else { return 0 }
        defer { closedir(entries) }
        while let entry = readdir(entries) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(name), let stat = try? KernelFile.read(FilePath("/proc/\(pid)/stat")),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 2, fields[0] == "Z", fields[1] == "\(getpid())",
               (try? KernelFile.read(FilePath("/proc/\(pid)/comm"))) == ourName {
                count += 1
            }
        }
        return count
    }

    /// The child cgroups of ours left in the parents' directories.
    static func leftoverGroups() -> [String] {
        let parentDirectories = [parents.memory?.directory, parents.freezerV2, parents.freezerV1].compactMap { $0 }
        var names: [String] = []
        for parent in parentDirectories {
            guard let entries = opendir(parent.string) else { continue }
            defer { closedir(entries) }
            while let entry = readdir(entries) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasPrefix("memory-pressure-child-\(getpid())-") { names.append(parent.appending(name).string) }
            }
        }
        return names
    }

    @Test func badSpecificationsAreClearErrorsAndLeaveNothingBehind() throws {
        let directory = try TemporaryDirectory()
        try directory.write("plain", "#!/bin/sh\nexit 0\n")  // mode 0600: not executable
        try directory.write("garbage", "\u{7}\u{1}not a program\n")
        chmod(directory.path.appending("garbage").string, 0o755)
        try directory.makeDirectory("folder")
        let cases: [(ProcessSpecification, String)] = [
            (ProcessSpecification(executable: ""), "executable \"\" is empty"),
            (ProcessSpecification(executable: "/no/such/program"), "executable \"/no/such/program\" does not exist"),
            (ProcessSpecification(executable: directory.path.appending("plain").string), "is not executable"),
            (ProcessSpecification(executable: directory.path.appending("folder").string), "is not a regular file"),
            (ProcessSpecification(executable: "./no-such-program", workingDirectory: directory.path), "is not found relative to the working directory"),
            (ProcessSpecification(executable: "no-such-program-anywhere", environment: ["PATH": directory.path.string]), "is not found in PATH (\(directory.path.string))"),
            (ProcessSpecification(executable: "plain", environment: ["PATH": directory.path.string]), "is found in PATH only as a file that is not executable"),
            (ProcessSpecification(executable: "/bin/sh", workingDirectory: directory.path.appending("missing")), "is not an existing directory"),
            (ProcessSpecification(executable: "/bin/sh", environment: ["A=B": "c"]), "is not a valid name"),
            (ProcessSpecification(executable: "/bin/sh", arguments: ["a\u{0}b"]), "argument 1 holds a NUL byte"),
            // Passes validation; execve refuses it: the failure comes back from the child.
            (ProcessSpecification(executable: directory.path.appending("garbage").string), "is not in a format the kernel can run"),
        ]
        for (specification, message) in cases {
            let error = try #require(throws: MemoryPressureError.self, "\(specification.executable)") {
                try ChildProcess.spawn(specification)
            }
            #expect(error.code == .invalidConfiguration)
            #expect(error.description.contains(message), "\(error)")
        }
        #expect(Self.unreapedForks() == 0, "every failed child was reaped")
        #expect(Self.leftoverGroups() == [], "every cgroup made for a failed child was removed")
    }

    @Test func aChildThatExitsAtOnceIsARecordedExitNotAHang() throws {
        let child = try ChildProcess.spawn(ProcessSpecification(executable: "/bin/false"))
        let termination = try #require(child.waitForExit(timeout: .seconds(30)))
        #expect(termination.exit == .exited(status: 1))
        #expect(Self.leftoverGroups() == [])
    }
}
