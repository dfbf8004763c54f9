#if canImport(Glibc)
import Glibc
#endif
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import SystemPackage
import Testing

// Nested in the serialized ChildProcessTests: its checks that no child cgroup is left count every
// cgroup this process made, so no other test may make children while they run.
extension ChildProcessTests {
    /// No child outlives its host, however the host ends: a real host process (`host-fixture`)
    /// with a running child, one running in the background and one frozen, killed with SIGKILL or
    /// ending with exit(0) and no `shutDown()`; and the next host's sweep of what a host left when
    /// its guardian was killed with it.
    @Suite(.serialized)
    struct HostEndTests {
        /// A host started with `end`, ready: its children's pids by app, and their cgroup directories.
        struct ReadyHost {
            let process: ChildProcess
            let children: [String: pid_t]
            let controlGroups: [FilePath]
            let log: String
        }

        /// Starts `host-fixture` to end by `end`, its frozen app frozen by `freezer` (this machine's
        /// best when nil), and waits until it is ready.
        static func startHost(
            _ end: String, freezer: FreezeMechanism? = nil, inside controlGroups: [FilePath] = [], in directory: TemporaryDirectory
        ) async throws -> ReadyHost {
            let fixture = try #require(executableBesideTheTests(named: "host-fixture"), "host-fixture is built beside the test bundle")
            let output = directory.path.appending("output-\(end)").string
            let log = directory.path.appending("log-\(end)").string
            // No cgroup of its own unless given (the shell enters each, then becomes the host): its
            // children's cgroups go beside its own, as any host's.
            let enter = controlGroups.map { "echo $$ > '\($0.appending("cgroup.procs"))' && " }.joined()
            let host = try ChildProcess.spawn(
                .shell("\(enter)HOST_FIXTURE_OUTPUT='\(output)' \(freezer.map { "HOST_FIXTURE_FREEZER='\($0.rawValue)' " } ?? "")exec '\(fixture)' \(end) 2>'\(log)'"),
                options: ChildProcessOptions(freezeMechanism: .stopSignal, usesMemoryControlGroup: false)
            )
            let ready = await eventually { (try? ClientChannelTests.lines(output))?.last == "ready" }
            try #require(ready, "the host got ready; its log: \(String(describing: try? KernelFile.read(FilePath(log))))")
            var children: [String: pid_t] = [:]
            var groups: [FilePath] = []
            for line in try ClientChannelTests.lines(output) {
                let words = line.split(separator: " ", maxSplits: 2)
                guard words.count == 3 else { continue }
                if words[0] == "pid" { children[String(words[1])] = pid_t(words[2]) ?? 0 }
                // As the host saw them before it said ready: an `exit` host's children may be gone
                // by the time this reads their /proc entries.
                if words[0] == "cgroup" { groups.append(FilePath(String(words[2]))) }
            }
            #expect(children.values.allSatisfy { $0 > 0 })
            return ReadyHost(process: host, children: children, controlGroups: groups, log: log)
        }

        /// The freezers this machine offers, for the frozen child.
        static var freezers: [FreezeMechanism] {
            let parents = ChildControlGroupParents.current
            return [parents.freezerV2 != nil ? .controlGroupV2 : nil, parents.freezerV1 != nil ? .controlGroupV1 : nil, .stopSignal].compactMap(\.self)
        }

        @Test(arguments: ["kill", "exit"], FreezeMechanism.allCases)
        func noChildOutlivesAHostThatEndsWithoutShutDown(end: String, freezer: FreezeMechanism) async throws {
            guard Self.freezers.contains(freezer) else {
                try Test.cancel("this machine has no \(freezer)")
            }
            let directory = try TemporaryDirectory()
            let host = try await Self.startHost(end, freezer: freezer, in: directory)
            #expect(Set(host.children.keys) == ["running", "worker", "frozen"])
            #expect(freezer == .stopSignal || !host.controlGroups.isEmpty)

            let ended = ContinuousClock.now
            if end == "kill" {
                #expect(host.children.values.allSatisfy(Self.isAlive))
                #expect(host.process.kill(timeout: .seconds(30))?.exit == .signaled(SIGKILL, coreDumped: false))
            } else {
                #expect(host.process.waitForExit(timeout: .seconds(30))?.exit == .exited(status: 0))
            }
            let gone = await eventually { !host.children.values.contains(where: Self.isAlive) && !host.controlGroups.contains(where: Self.exists) }
            print("host ended by \(end), frozen by \(freezer): its children and cgroups gone in \(ContinuousClock.now - ended)")
            #expect(gone, "alive: \(host.children.filter { Self.isAlive($0.value) }), cgroups left: \(host.controlGroups.filter(Self.exists))")
        }

        /// A host killed with its guardian (as a container's kill takes both) leaves its cgroups,
        /// and a child frozen by the v1 freezer in its cgroup; the next host to start a child sweeps
        /// them, and says so.
        @Test func theNextHostSweepsWhatAHostKilledWithItsGuardianLeft() async throws {
            let directory = try TemporaryDirectory()
            let freezer = Self.freezers.contains(.controlGroupV1) ? .controlGroupV1 : Self.freezers.first
            // The two hosts run in cgroups of their own, one in each hierarchy this process's
            // children use: any other process of the library that finds its parents meanwhile (a
            // host of another test, a `mempressure` run) sweeps the shared ones, and under
            // ThreadSanitizer one swept this test's leftovers there before its next host could.
            let parents = ChildControlGroupParents.current
            let own = Set([parents.memory?.directory, parents.freezerV1, parents.freezerV2].compactMap(\.self)).map {
                $0.appending("host-sweep-test-\(getpid())-\(UInt32.random(in: 0 ... .max))")
            }
            for group in own { #expect(mkdir(group.string, 0o755) == 0, "\(group)") }
            defer { for group in own { rmdir(group.string) } }
            let host = try await Self.startHost("kill", freezer: freezer, inside: own, in: directory)
            guard !host.controlGroups.isEmpty else {
                try Test.cancel("this machine gives children no cgroups: there is nothing to sweep")
            }
            let guardians = Self.children(of: host.process.pid).filter { Self.commandLine(of: $0).contains("memory-pressure-guardian") }
            #expect(guardians.count == 1)
            for guardian in guardians { kill(guardian, SIGKILL) }
            #expect(await eventually { !guardians.contains(where: Self.isAlive) })
            _ = host.process.kill(timeout: .seconds(30))
            let frozen = try #require(host.children["frozen"])
            if freezer == .controlGroupV1 {
                // Without its guardian the frozen child waits for a thaw, SIGKILL pending, for ever:
                // a wait for what does not happen, bounded.
                #expect(await eventually(within: .milliseconds(500)) { !Self.isAlive(frozen) } == false)
            }
            #expect(host.controlGroups.allSatisfy(Self.exists), "no guardian removed them")

            let next = try await Self.startHost("sweep", inside: own, in: directory)
            #expect(next.process.waitForExit(timeout: .seconds(30))?.exit == .exited(status: 0))
            #expect(await eventually { !Self.isAlive(frozen) && !host.controlGroups.contains(where: Self.exists) }, "frozen alive: \(Self.isAlive(frozen)), left: \(host.controlGroups.filter(Self.exists))")
            let log = try KernelFile.read(FilePath(next.log))
            #expect(log.contains("left by processes no longer alive"), "the sweep is logged: \(log)")
        }

        // MARK: Helpers

        /// Whether `pid` is a live process: not gone, not a zombie (a dead host's child waits for a
        /// reaper that may not reap).
        static func isAlive(_ pid: pid_t) -> Bool {
            guard let stat = try? KernelFile.read(FilePath("/proc/\(pid)/stat")),
                  let close = stat.lastIndex(of: ")")
            else { return false }
            return stat[stat.index(close, offsetBy: 2)] != "Z"
        }

        static func exists(_ path: FilePath) -> Bool {
            access(path.string, F_OK) == 0
        }

        /// The children of `pid`, from each of its threads' `children` file.
        static func children(of pid: pid_t) -> [pid_t] {
            guard let tasks = opendir("/proc/\(pid)/task") else { return [] }
            defer { closedir(tasks) }
            var children: [pid_t] = []
            while let entry = readdir(tasks) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                guard Int(name) != nil else { continue }
                let listed = (try? KernelFile.read(FilePath("/proc/\(pid)/task/\(name)/children"))) ?? ""
                children += listed.split(separator: " ").compactMap { pid_t($0) }
            }
            return children
        }

        static func commandLine(of pid: pid_t) -> String {
            ((try? KernelFile.read(FilePath("/proc/\(pid)/cmdline"))) ?? "").replacingOccurrences(of: "\0", with: " ")
        }
    }
}
