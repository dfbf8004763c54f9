#if canImport(Glibc)
import Glibc
#endif
import MemoryPressure
import MemoryPressureTestKit
import Synchronization
import SystemPackage
import Testing

// Nested in the serialized ChildProcessTests: its checks that no child cgroup is left count every
// cgroup this process made, so no other test may make children while they run.
extension ChildProcessTests {
    /// Process apps misused through the public API alone: bad specifications and options, launches
    /// and terminations from many tasks at once, terminations repeated, relaunches at once, status
    /// asked of the wrong apps, a shutdown while children start. Each ends in a typed error or the
    /// documented behaviour, with no child and no cgroup left behind.
    @Suite(.serialized)
    struct ProcessAppMisuseTests {
        static let configuration = try! AppConfiguration(
            backgroundDeadline: .seconds(2), terminationDeadline: .milliseconds(1500), backgroundTaskTimeLimit: .seconds(30)
        )

        static func system() throws -> MemorySystem {
            var configuration = try MemorySystem.Configuration.test(targetBytes: 256 << 20)
            configuration.logger = silentLogger
            return try MemorySystem(configuration: configuration)
        }

        /// The error registering `process` throws, or nil.
        static func registrationError(
            _ system: MemorySystem, _ name: String, _ process: ProcessSpecification, options: ProcessAppOptions = ProcessAppOptions()
        ) -> MemoryPressureError? {
            do {
                _ = try system.register(.test(name), process: process, configuration: configuration, options: options)
                return nil
            } catch {
                return error
            }
        }

        // MARK: Specifications

        @Test func malformedSpecificationsAreTypedErrorsThatNameTheProblem() throws {
            let system = try Self.system()
            let cases: [(String, ProcessSpecification, String)] = [
                ("empty", ProcessSpecification(executable: ""), "empty"),
                ("nul", ProcessSpecification(executable: "/bin/sh\u{0}x"), "NUL"),
                ("argument-nul", ProcessSpecification(executable: "/bin/sh", arguments: ["-c", "a\u{0}b"]), "NUL"),
                ("relative-missing", ProcessSpecification(executable: "./no-such-program-mempressure"), "not found"),
                ("relative-in-missing-directory", ProcessSpecification(
                    executable: "./sleep", workingDirectory: "/nonexistent/mempressure-dir"
                ), "working directory"),
                ("directory-is-a-file", ProcessSpecification(executable: "/bin/sleep", workingDirectory: "/bin/sh"), "working directory"),
                ("name-with-equals", ProcessSpecification(executable: "/bin/sleep", environment: ["A=B": "1"]), "environment name"),
                ("empty-name", ProcessSpecification(executable: "/bin/sleep", environment: ["": "1"]), "environment name"),
                ("name-with-nul", ProcessSpecification(executable: "/bin/sleep", environment: ["A\u{0}B": "1"]), "environment name"),
                ("value-with-nul", ProcessSpecification(executable: "/bin/sleep", environment: ["A": "1\u{0}2"]), "NUL"),
                ("not-in-path", ProcessSpecification(executable: "sleep", environment: ["PATH": "/nonexistent"]), "PATH"),
            ]
            for (name, process, words) in cases {
                let error = Self.registrationError(system, name, process)
                #expect(error?.code == .invalidConfiguration, "\(name): \(String(describing: error))")
                #expect(error.map { "\($0)".contains(words) } == true, "\(name): \(String(describing: error))")
                #expect(system.app(.test(name)) == nil)
            }
            // Relative paths resolve against the working directory; bare names through PATH.
            #expect(Self.registrationError(system, "relative", ProcessSpecification(executable: "./sleep", workingDirectory: "/bin")) == nil)
            #expect(Self.registrationError(system, "bare", ProcessSpecification(executable: "sleep", arguments: ["1"])) == nil)
        }

        @Test func anArgumentListTheKernelCannotTakeIsRefusedAtRegistration() throws {
            let system = try Self.system()
            // One argument longer than the kernel's limit for a single string (32 pages), and a
            // list longer in total than the whole argument space.
            let long = String(repeating: "a", count: 200_000)
            let many = Array(repeating: String(repeating: "b", count: 1000), count: 10_000)
            let largeEnvironment = ["BIG": String(repeating: "c", count: 200_000)]
            for (name, process) in [
                ("one-long-argument", ProcessSpecification(executable: "/bin/sleep", arguments: [long])),
                ("many-arguments", ProcessSpecification(executable: "/bin/sleep", arguments: many)),
                ("long-environment", ProcessSpecification(executable: "/bin/sleep", environment: largeEnvironment)),
            ] {
                let error = Self.registrationError(system, name, process)
                #expect(error?.code == .invalidConfiguration, "\(name): \(String(describing: error))")
                #expect(error.map { "\($0)".contains("expected") } == true, "\(name): \(String(describing: error))")
                #expect(system.app(.test(name)) == nil)
            }
            // A large list within the limits is fine.
            let fine = Array(repeating: "x", count: 10_000)
            #expect(Self.registrationError(system, "many-short", ProcessSpecification(executable: "/bin/true", arguments: fine)) == nil)
        }

        @Test func warningSignalsAtAndBeyondTheAcceptedRange() throws {
            let system = try Self.system()
            let accepted = ProcessAppOptions.Channel.acceptedSignals
            for signal in [Int32.min, -1, 0, accepted.upperBound + 1, .max, SIGKILL, SIGSTOP, SIGCONT] {
                let error = Self.registrationError(
                    system, "signal\(signal)", .shell("exit 0"), options: ProcessAppOptions(channel: .signal(signal))
                )
                #expect(error?.code == .invalidArgument, "signal \(signal)")
                #expect(error.map { "\($0)".contains("expected") } == true)
            }
            for signal in [accepted.lowerBound, SIGUSR1, accepted.upperBound] {
                #expect(
                    Self.registrationError(
                        system, "fine-signal\(signal)", .shell("exit 0"), options: ProcessAppOptions(channel: .signal(signal))
                    ) == nil,
                    "signal \(signal)"
                )
            }
        }

        // MARK: Status

        @Test func theProcessOfAnUnknownOrInProcessAppIsNil() async throws {
            let system = try Self.system()
            #expect(system.process(of: .test("unknown")) == nil)
            #expect(system.process(of: .service) == nil)
            let plain = try system.register(.test("in-process")) { IdleDelegate() }
            try await plain.launch()
            #expect(system.process(of: plain.identifier) == nil)
            let registered = try system.register(.test("not-launched"), process: .shell("sleep 30"), configuration: Self.configuration)
            #expect(system.process(of: registered.identifier) == nil)
            try await plain.terminate(reason: .explicit)
        }

        // MARK: Concurrent and repeated lifecycle calls

        @Test func launchesAndTerminationsFromManyTasksLeaveOneChildOrNone() async throws {
            let system = try Self.system()
            let app = try system.register(.test("contended"), process: .shell("exec sleep 600"), configuration: Self.configuration)
            let pids = SharedLog<Int32>()
            let unexpected = SharedLog<String>()
            let finished = await withDeadline(.seconds(120)) {
                await withTaskGroup(of: Void.self) { group in
                    for task in 0..<12 {
                        group.addTask {
                            for round in 0..<4 {
                                do {
                                    switch (task + round) % 4 {
                                    case 0, 2: try await app.launch()
                                    case 1: try await app.enterBackground()
                                    default: try await app.terminate(reason: .explicit)
                                    }
                                } catch let error as MemoryPressureError {
                                    if error.code != .invalidTransition { unexpected.append("\(error)") }
                                } catch {
                                    unexpected.append("\(error)")
                                }
                                if let pid = system.process(of: app.identifier)?.pid { pids.append(pid) }
                            }
                        }
                    }
                }
                return true
            }
            #expect(finished == true, "nothing hangs")
            #expect(unexpected.all.isEmpty)
            if app.state != .notRunning { try await app.terminate(reason: .explicit) }
            #expect(app.state == .notRunning)
            #expect(system.process(of: app.identifier) == nil)
            for pid in Set(pids.all) {
                #expect(await eventually { !isAlive(pid) }, "child \(pid) is gone")
            }
            // And it launches again, one child.
            #expect(try await app.launch() == .active)
            let pid = try #require(system.process(of: app.identifier)).pid
            #expect(isAlive(pid))
            try await app.terminate(reason: .explicit)
            #expect(await eventually { !isAlive(pid) })
        }

        @Test func terminatingTwiceIsATypedErrorAndARelaunchRunsANewChild() async throws {
            let system = try Self.system()
            let app = try system.register(.test("twice"), process: .shell("exec sleep 600"), configuration: Self.configuration)
            try await app.launch()
            let first = try #require(system.process(of: app.identifier)).pid
            async let one = Self.terminationError(app)
            async let two = Self.terminationError(app)
            let errors = await [one, two]
            #expect(errors.filter { $0 == nil }.count == 1, "one termination is made: \(errors)")
            #expect(errors.compactMap { $0?.code } == [.invalidTransition])
            #expect(app.state == .notRunning)
            let again = await Self.terminationError(app)
            #expect(again?.code == .invalidTransition)
            #expect(again.map { "\($0)".contains("notRunning") || "\($0)".contains("not running") } == true, "\(String(describing: again))")
            // Relaunched at once: a new child, the old one reaped.
            #expect(try await app.launch() == .active)
            let second = try #require(system.process(of: app.identifier)).pid
            #expect(second != first)
            #expect(await eventually { !isAlive(first) })
            #expect(try await app.terminate(reason: .explicit) == .notRunning)
            #expect(await eventually { !isAlive(second) })
            #expect(system.terminations.filter { $0.app == app.identifier }.count == 2)
        }

        static func terminationError(_ app: App) async -> MemoryPressureError? {
            do {
                _ = try await app.terminate(reason: .explicit)
                return nil
            } catch {
                return error
            }
        }

        @Test func aShutDownWhileChildrenLaunchLeavesNoChild() async throws {
            let system = try Self.system()
            let apps = try (0..<6).map { index in
                try system.register(.test("launching-\(index)"), process: .shell("exec sleep 600"), configuration: Self.configuration)
            }
            let pids = SharedLog<Int32>()
            let finished = await withDeadline(.seconds(120)) {
                await withTaskGroup(of: Void.self) { group in
                    for app in apps {
                        group.addTask {
                            _ = try? await app.launch()
                            if let pid = system.process(of: app.identifier)?.pid { pids.append(pid) }
                        }
                    }
                    group.addTask { _ = await system.shutDown() }
                }
                // A launch that began after the shutdown is documented to go on: end those too.
                _ = await system.shutDown()
                return true
            }
            #expect(finished == true, "nothing hangs")
            for app in apps {
                #expect(app.state == .notRunning, "\(app.identifier)")
                #expect(system.process(of: app.identifier) == nil)
            }
            for pid in Set(pids.all) {
                #expect(await eventually { !isAlive(pid) }, "child \(pid) is gone")
            }
        }
    }
}

/// Whether `pid` is alive and not a zombie.
private func isAlive(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0, let stat = try? String(contentsOfProcFile: "/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else {
        return false
    }
    return stat[stat.index(close, offsetBy: 2)] != "Z"
}

extension String {
    /// A small /proc file's text.
    fileprivate init(contentsOfProcFile path: String) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw Errno(rawValue: errno) }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = read(descriptor, &bytes, bytes.count)
        guard count >= 0 else { throw Errno(rawValue: errno) }
        self = String(decoding: bytes.prefix(count), as: UTF8.self)
    }
}
