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

extension ChildProcessTests {
    /// The footprint of real children that allocate tens of MiB: by their cgroup, by statm corrected
    /// by PSS, by the process tree, and the kernel's OOM kill at a child's own limit.
    ///
    /// Their children's memory counts in this process's cgroup, which other suites measure, so they
    /// run alone among those (one turn for the four). Nested in the serialized ChildProcessTests
    /// like every suite that makes children, and named to come last in that chain: the chain's
    /// other tests do not wait for the memory tests' turn.
    @Suite(.serialized, .exclusiveMemoryUse)
    struct ProcessFootprintTests {
        static let python = "/usr/bin/python3"

        /// A Python child that allocates and touches 64 MiB, then writes `ready` and sleeps.
        static func spawnSixtyFourMiB(options: ChildProcessOptions, in directory: TemporaryDirectory) async throws -> ChildProcess {
            guard access(python, X_OK) == 0 else {
                try Test.cancel("\(python) is not installed here; it allocates and touches 64 MiB (sh cannot)")
            }
            let ready = directory.path.appending("ready").string
            let child = try ChildProcess.spawn(
                ProcessSpecification(
                    executable: python,
                    arguments: ["-c", "b = bytearray(b'\\x01') * (64 << 20); open('\(ready)', 'w').close(); import time; time.sleep(60)"]
                ),
                options: options
            )
            #expect(await eventually { access(ready, F_OK) == 0 }, "the child has touched its 64 MiB")
            return child
        }

        @Test func theFootprintOfA64MiBChildByItsCgroup() async throws {
            guard ChildProcessTests.parents.memory != nil else {
                try Test.cancel("no child memory cgroup can be made here: \(ChildProcessTests.parents.memoryReason ?? "")")
            }
            let directory = try TemporaryDirectory()
            let child = try await Self.spawnSixtyFourMiB(options: ChildProcessOptions(), in: directory)
            defer { child.kill() }
            let footprint = try child.footprint()
            #expect(footprint.mechanism == ChildProcessTests.parents.memoryMechanism)
            #expect(footprint.mechanism != .residentSet)
            #expect((60 << 20)...(160 << 20) ~= footprint.bytes, "cgroup working set \(footprint.bytes) bytes")
            let resident = try child.residentSetBytes()
            #expect((60 << 20)...(160 << 20) ~= resident, "statm RSS \(resident) bytes")
        }

        @Test func theFootprintOfA64MiBChildByStatmCorrectedByPSS() async throws {
            let directory = try TemporaryDirectory()
            let child = try await Self.spawnSixtyFourMiB(
                options: ChildProcessOptions(usesMemoryControlGroup: false, proportionalSetInterval: .milliseconds(1)),
                in: directory
            )
            defer { child.kill() }
            let footprint = try child.footprint()
            #expect(footprint.mechanism == .residentSet)
            #expect(child.memoryMechanism == .residentSet)
            #expect((60 << 20)...(160 << 20) ~= footprint.bytes, "RSS corrected by PSS: \(footprint.bytes) bytes")
            // PSS shares the interpreter's pages with other processes: at most the resident set.
            #expect(footprint.bytes <= (try child.residentSetBytes()) + (1 << 20))
            let rollup = try OpenKernelFile(FilePath("/proc/\(child.pid)/smaps_rollup"))
            let (proportional, swapped) = try ChildMemoryReader.rollupFigures(from: rollup)
            #expect((60 << 20)...(160 << 20) ~= proportional, "PSS \(proportional) bytes")
            #expect(swapped == footprint.swappedBytes, "the footprint's bytes in swap are the rollup's")
        }

        @Test func withoutACgroupTheFootprintCountsWhatTheChildStarted() async throws {
            let directory = try TemporaryDirectory()
            let ready = directory.path.appending("ready").string
            // A shell that starts a second one holding about 48 MiB in a variable, as a shell script
            // would start its worker; the first shell holds almost nothing itself.
            let child = try ChildProcess.spawn(
                .shell("sh -c 'x=$(head -c 50000000 /dev/zero | tr \"\\0\" a); touch \(ready); sleep 60' & wait"),
                options: ChildProcessOptions(usesMemoryControlGroup: false)
            )
            defer { child.kill() }
            #expect(await eventually { access(ready, F_OK) == 0 }, "the grandchild holds its 48 MiB")
            let descendants = ProcessTree.descendants(of: child.pid)
            #expect(!descendants.isEmpty, "the child's worker is found")
            let own = try child.residentSetBytes()
            let footprint = try child.footprint()
            #expect(footprint.mechanism == .residentSet)
            #expect(own < 16 << 20, "the child itself holds \(own) bytes")
            #expect(footprint.bytes >= own + (40 << 20), "footprint \(footprint.bytes) bytes counts the worker's 48 MiB")
            child.kill()
            #expect(await eventually { descendants.allSatisfy(ChildProcessTests.isGone) }, "the kill ends what the child started")
        }

        @Test func theKernelsOOMKillAtTheChildsLimitIsToldFromOurs() async throws {
            guard ChildProcessTests.parents.memory != nil else {
                try Test.cancel("no child memory cgroup can be made here: \(ChildProcessTests.parents.memoryReason ?? "")")
            }
            guard access(Self.python, X_OK) == 0 else {
                try Test.cancel("\(Self.python) is not installed here; it allocates past the limit (sh cannot)")
            }
            let child = try ChildProcess.spawn(
                ProcessSpecification(executable: Self.python, arguments: ["-c", "b = bytearray(b'\\x01') * (64 << 20)"]),
                options: ChildProcessOptions(memoryLimitBytes: 24 << 20)
            )
            let termination = try #require(child.waitForExit(timeout: .seconds(30)))
            #expect(termination.exit == .signaled(SIGKILL, coreDumped: false), "\(termination)")
            #expect(!termination.killedByUs)
            #expect((termination.controlGroupOOMKills ?? 0) >= 1)
            #expect(termination.wasKilledByKernelOOMKiller == true)
            #expect(ChildProcessTests.leftoverGroups() == [])
        }
    }
}
