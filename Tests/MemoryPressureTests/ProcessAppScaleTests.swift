#if canImport(Glibc)
import Glibc
#endif
import MemoryPressure
import MemoryPressureTestKit
import Testing

extension ChildProcessTests {
    /// A hundred process apps through their lifecycle, through the public API: every child started,
    /// frozen with its app suspended, killed and reaped at its termination, with the threads bounded
    /// (one watches every child's exit) and nothing left behind. No figure of time is asserted; the
    /// threads of tests running alongside count in the bound, which leaves them room.
    ///
    /// Nested in ``ChildProcessTests``, which is serialized: its tests find every child cgroup of this
    /// process left over, and this test's hundred would be theirs.
    @Suite struct ProcessAppScaleTests {
        static let count = 100

        @Test func aHundredProcessAppsRunFreezeAndEndWithBoundedThreadsAndNothingLeft() async throws {
            let threadsAtStart = processThreadCount()
            let watchesBefore = threadIdentifiers(named: "mp-child-exits")
            var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
            configuration.logger = silentLogger
            let system = try MemorySystem(configuration: configuration)
            let apps = try (0..<Self.count).map { index in
                try system.register(.test("sleeper-\(index)"), process: .shell("exec sleep 600"))
            }
            let peak = PeakThreadCount()

            // Every child started, running, each in its own process. The system's exit watch starts with
            // its first child (other tests' systems have their own).
            #expect(try await apps[0].launch() == .active)
            // The thread names itself once it runs.
            #expect(await eventually { !threadIdentifiers(named: "mp-child-exits").subtracting(watchesBefore).isEmpty },
                    "a thread watches the children's exits")
            let watches = threadIdentifiers(named: "mp-child-exits").subtracting(watchesBefore)
            for app in apps.dropFirst() {
                #expect(try await app.launch() == .active)
            }
            let launched = apps.compactMap { system.process(of: $0.identifier) }
            try #require(launched.count == Self.count, "every launched process app has its process")
            let pids = launched.map(\.pid)
            #expect(Set(pids).count == Self.count)
            #expect(pids.allSatisfy { childState($0).map { $0 != "Z" } ?? false }, "every child runs, a child of this process")
            let controlGroups = launched.flatMap(\.controlGroups)
            #expect(
                threadIdentifiers(named: "mp-child-exits").subtracting(watchesBefore).count < 5,
                "one thread watches every child's exit, not one per child"
            )

            // Every app suspended, every child frozen. `enterBackground` may return while the app is
            // still in the background (the system still running some of its code), suspended soon after.
            for app in apps {
                #expect([.suspended, .background].contains(try await app.enterBackground()))
            }
            #expect(await eventually { apps.allSatisfy { $0.state == .suspended } })
            let suspended = apps.compactMap { system.process(of: $0.identifier) }
            #expect(suspended.count == Self.count)
            #expect(suspended.allSatisfy { $0.isFrozen }, "every suspended app's child is frozen")
            #expect(suspended.map(\.pid) == pids)
            #expect(threadIdentifiers(named: "mp-child-exits").isSuperset(of: watches), "the same watch, still running")

            // Half terminated one by one, the rest by the shutdown.
            for app in apps[..<(Self.count / 2)] {
                #expect(try await app.terminate(reason: .systemPressure) == .notRunning)
            }
            let records = await system.shutDown()
            let most = await peak.stop()
            // One thread per child would add a hundred; the tests running alongside (more of them
            // since the child chain's tests run beside the memory turns) add their own: 42 were seen
            // under ThreadSanitizer in CI.
            #expect(most - threadsAtStart < Self.count / 2, "threads bounded, not one per child: \(threadsAtStart) at the start, \(most) at peak")

            // All ended: none alive, no zombie, no cgroup left, the watch's thread gone.
            #expect(apps.allSatisfy { $0.state == .notRunning })
            #expect(apps.allSatisfy { system.process(of: $0.identifier) == nil })
            #expect(records.count == Self.count - Self.count / 2)
            let ended = system.terminations.filter { record in apps.contains { $0.identifier == record.app } }
            #expect(ended.count == Self.count)
            #expect(ended.allSatisfy { $0.state == .suspended && $0.processExit != nil }, "each suspended child was killed, its exit recorded")
            let left = pids.compactMap { pid in childState(pid).map { "\(pid): \($0)" } }
            #expect(left.isEmpty, "every child reaped: none alive, no zombie")
            #expect(controlGroups.filter { access($0, F_OK) == 0 }.isEmpty, "every child's cgroup removed")
            #expect(await eventually { threadIdentifiers(named: "mp-child-exits").isDisjoint(with: watches) }, "the exit watch's thread ended")
        }
    }
}

/// `pid`'s state letter from `/proc/PID/stat` while it is this process's child, alive or a zombie;
/// nil once it is reaped (gone, or its pid another process's).
private func childState(_ pid: Int32) -> Character? {
    guard let stat = try? String(contentsOfProcFile: "/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 1, Int32(fields[1]) == getpid() else { return nil }
    return fields[0].first
}

/// The ids of the process's threads named `name` (`/proc/self/task/*/comm`).
private func threadIdentifiers(named name: String) -> Set<Int> {
    guard let directory = opendir("/proc/self/task") else { return [] }
    defer { closedir(directory) }
    var identifiers: Set<Int> = []
    while let entry = readdir(directory) {
        let task = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard let identifier = Int(task),
              let comm = try? String(contentsOfProcFile: "/proc/self/task/\(task)/comm"),
              comm.split(separator: "\n").first.map(String.init) == name
        else { continue }
        identifiers.insert(identifier)
    }
    return identifiers
}

extension String {
    /// A small `/proc` file's text, read with `open` and `read`.
    fileprivate init(contentsOfProcFile path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ProcFileError() }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4_096)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { throw ProcFileError() }
        self = String(decoding: bytes.prefix(count), as: UTF8.self)
    }
}

private struct ProcFileError: Error {}
