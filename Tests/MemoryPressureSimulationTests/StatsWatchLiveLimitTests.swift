import Foundation
import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Against the real kernel: `mempressure stats --watch --budget auto`, started in a new memory
/// cgroup with no limit, prints the budget that follows when the cgroup's limit is lowered. Needs
/// root and a writable memory hierarchy (v2 or v1); cancelled with the reason elsewhere.
@Suite(.serialized)
struct StatsWatchLiveLimitTests {
    /// A memory cgroup of the test's own, made under the hierarchy's root and removed at the end.
    struct RealMemoryCgroup {
        let directory: FilePath
        let isVersion2: Bool

        /// Makes one, or cancels the test with why it cannot.
        static func make() throws -> RealMemoryCgroup {
            guard geteuid() == 0 else { try Test.cancel("making a memory cgroup takes root") }
            let mounts = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
            var version1: String?
            var version2: String?
            for line in mounts.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard let separator = fields.firstIndex(of: "-"), separator + 3 < fields.count else { continue }
                let point = String(fields[4])
                if fields[separator + 1] == "cgroup2", version2 == nil,
                   let controllers = try? String(contentsOfFile: point + "/cgroup.subtree_control", encoding: .utf8),
                   controllers.split(separator: " ").map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }).contains("memory") {
                    version2 = point
                } else if fields[separator + 1] == "cgroup", fields[separator + 3].split(separator: ",").contains("memory") {
                    version1 = point
                }
            }
            guard let root = version2 ?? version1 else {
                try Test.cancel("no memory cgroup hierarchy is mounted (no cgroup2 with memory in its root's subtree_control, no v1 memory)")
            }
            let directory = FilePath(root).appending("mempressure-live-limit-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
            guard mkdir(directory.string, 0o755) == 0 else {
                try Test.cancel("cannot make \(directory): \(Errno(rawValue: errno)) (a read-only cgroup mount?)")
            }
            return RealMemoryCgroup(directory: directory, isVersion2: version2 != nil)
        }

        var processesFile: String { directory.appending("cgroup.procs").string }

        func setLimit(_ bytes: Int) throws {
            let file = directory.appending(isVersion2 ? "memory.max" : "memory.limit_in_bytes")
            try "\(bytes)\n".write(toFile: file.string, atomically: false, encoding: .utf8)
        }

        func remove() {
            rmdir(directory.string)
        }
    }

    /// `mempressure stats --watch --budget BUDGET`, started inside `cgroup`; its lines of output
    /// are collected as they come. The caller ends it.
    static func watch(in cgroup: RealMemoryCgroup, budget: String) throws -> (Process, SharedLog<String>) {
        let tool = try Tool.executable().path
        let process = Process()
        process.executableURL = URL(filePath: "/bin/sh")
        // The shell enters the cgroup, then becomes the tool: the tool starts inside it.
        process.arguments = [
            "-c", "echo $$ > '\(cgroup.processesFile)' && exec '\(tool)' stats --watch --budget \(budget) --interval 100ms --limit-interval 200ms",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let lines = SharedLog<String>()
        try process.run()
        Thread.detachNewThread {
            var pending = ""
            while true {
                let data = output.fileHandleForReading.availableBytes()
                if data.isEmpty { return }
                pending += String(decoding: data, as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    lines.append(String(pending[..<newline]))
                    pending = String(pending[pending.index(after: newline)...])
                }
            }
        }
        return (process, lines)
    }

    @Test func theWatchedBudgetFollowsALimitLoweredOnTheToolsCgroup() async throws {
        let cgroup = try RealMemoryCgroup.make()
        defer { cgroup.remove() }
        let (process, lines) = try Self.watch(in: cgroup, budget: "auto")
        defer {
            process.terminate()
            process.waitUntilExit()
        }

        // The tool samples inside the cgroup, which has no limit of its own.
        #expect(await eventually(within: .seconds(60)) { lines.all.count >= 3 }, "the tool printed: \(lines.all)")
        #expect(lines.all.first?.hasPrefix("budget ") == true)
        let limit = 512 << 20
        try cgroup.setLimit(limit)
        let expected = Int(Double(limit) * 0.9)
        #expect(await eventually { lines.all.contains { $0.hasPrefix("budget changed: ") } }, "the tool printed: \(lines.all.suffix(5))")
        let change = try #require(lines.all.first { $0.hasPrefix("budget changed: ") })
        #expect(change.contains("now \(expected) bytes"), "\(change)")
        // Samples after the change are judged against the new budget.
        let judged = lines.all.count
        #expect(await eventually { lines.all.count > judged + 2 })
        #expect(lines.all.last?.contains("% of budget") == true)
    }

    /// A budget given in bytes under the new limit stays; the limit's change is still printed.
    @Test func aLimitThatMovesNoBudgetIsPrintedToo() async throws {
        let cgroup = try RealMemoryCgroup.make()
        defer { cgroup.remove() }
        let (process, lines) = try Self.watch(in: cgroup, budget: "64MiB")
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        #expect(await eventually(within: .seconds(60)) { lines.all.count >= 3 }, "the tool printed: \(lines.all)")
        try cgroup.setLimit(512 << 20)
        #expect(await eventually { lines.all.contains { $0.hasPrefix("cgroup limit changed: ") } }, "the tool printed: \(lines.all.suffix(5))")
        let change = try #require(lines.all.first { $0.hasPrefix("cgroup limit changed: ") })
        #expect(change.hasSuffix("-> 512 MiB (536870912 bytes)"), "\(change)")
        #expect(!lines.all.contains { $0.hasPrefix("budget changed: ") })
    }
}
