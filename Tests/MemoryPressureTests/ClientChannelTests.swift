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
import MemoryPressureClient
import MemoryPressureTestKit
import Synchronization
import SystemPackage
import Testing

// Nested in the serialized ChildProcessTests: its checks that no child cgroup is left count every
// cgroup this process made, so no other test may make children while they run.
extension ChildProcessTests {
    /// The client channel against real children: the `client-fixture` executable (built beside the
    /// test bundle, a dependency of this target) written on `MemoryPressureClient`, children that never
    /// answer, and children that end; and both ends in this process, for the exact sequences.
    struct ClientChannelTests {
        // MARK: A real child

        @Test func everyCallbackArrivesInOrderAndIsAnswered() throws {
            let directory = try TemporaryDirectory()
            let log = directory.path.appending("log").string
            let channel = try ClientChannel()
            let child = try Self.spawnFixture(on: channel, log: log)
            defer { child.kill() }

            let callbacks: [ClientCallback] = [
                .willFinishLaunching, .didFinishLaunching, .didBecomeActive, .willResignActive,
                .didEnterBackground, .didReceiveMemoryWarning(.warning), .willEnterForeground,
                .didBecomeActive, .didReceiveMemoryWarning(.critical), .willTerminate,
            ]
            for callback in callbacks {
                #expect(channel.call(callback, timeout: .seconds(30)) == .answered, "\(callback)")
            }
            // Each line was written before its callback returned, so before its answer.
            #expect(try Self.lines(log) == [
                "willFinishLaunching", "didFinishLaunching", "didBecomeActive", "willResignActive",
                "didEnterBackground", "didReceiveMemoryWarning warning", "ballast 0", "willEnterForeground",
                "didBecomeActive", "didReceiveMemoryWarning critical", "ballast 0", "willTerminate",
            ])
            // willTerminate answered: the fixture exits by itself.
            let termination = try #require(child.waitForExit(timeout: .seconds(30)))
            #expect(termination.exit == .exited(status: 0))
            #expect(channel.call(.didBecomeActive, timeout: .seconds(30)) == .closed)
        }

        @Test func aMemoryWarningFreesHalfTheBallast() throws {
            let directory = try TemporaryDirectory()
            let log = directory.path.appending("log").string
            let channel = try ClientChannel()
            let child = try Self.spawnFixture(on: channel, log: log, ["CLIENT_FIXTURE_BALLAST_BYTES": "\(64 << 20)"])
            defer { child.kill() }
            // Answered: the fixture has made and touched its ballast.
            #expect(channel.call(.didFinishLaunching, timeout: .seconds(30)) == .answered)
            let before = try child.residentSetBytes()
            #expect(before >= 64 << 20, "the ballast is resident: \(before) bytes")

            #expect(channel.call(.didReceiveMemoryWarning(.warning), timeout: .seconds(30)) == .answered)
            #expect(try Self.lines(log).last == "ballast \(32 << 20)")
            let after = try child.residentSetBytes()
            #expect(before - after >= 24 << 20, "half the ballast is returned: \(before) → \(after) bytes")

            // A posted warning is not waited on; it arrives all the same, and its answer does not
            // answer the next call.
            #expect(channel.post(.didReceiveMemoryWarning(.critical)))
            #expect(channel.call(.didBecomeActive, timeout: .seconds(30)) == .answered)
            #expect(try Self.lines(log).suffix(3) == ["didReceiveMemoryWarning critical", "ballast \(16 << 20)", "didBecomeActive"])
        }

        @Test func aChildThatDoesNotAnswerTimesOutWithoutHanging() throws {
            let channel = try ClientChannel()
            // sleep holds the descriptor and never reads it.
            let child = try ChildProcess.spawn(
                ProcessSpecification(executable: "/bin/sleep", arguments: ["30"]),
                options: ChildProcessOptions(inheritedDescriptors: [channel.childDescriptor])
            )
            channel.closeChildEnd()
            defer { child.kill() }

            var start = ContinuousClock.now
            #expect(channel.call(.didBecomeActive, timeout: .milliseconds(300)) == .timedOut)
            var elapsed = ContinuousClock.now - start
            #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(5), "\(elapsed)")

            // Killed: the next call is closed at once, not timed out.
            child.kill()
            start = .now
            #expect(channel.call(.willResignActive, timeout: .seconds(30)) == .closed)
            elapsed = .now - start
            #expect(elapsed < .seconds(5), "\(elapsed)")
        }

        @Test func aChildThatEndsDuringTheCallIsClosed() throws {
            let channel = try ClientChannel()
            let child = try ChildProcess.spawn(
                ProcessSpecification(executable: "/bin/sleep", arguments: ["0.3"]),
                options: ChildProcessOptions(inheritedDescriptors: [channel.childDescriptor])
            )
            channel.closeChildEnd()
            defer { child.kill() }

            let start = ContinuousClock.now
            #expect(channel.call(.didEnterBackground, timeout: .seconds(30)) == .closed)
            #expect(ContinuousClock.now - start < .seconds(10))
            // From then on at once.
            #expect(channel.call(.willTerminate, timeout: .seconds(30)) == .closed)
            #expect(!channel.post(.didReceiveMemoryWarning(.critical)))
        }

        @Test func aDeadChildIsClosed() throws {
            let channel = try ClientChannel()
            let child = try ChildProcess.spawn(
                ProcessSpecification(executable: "/bin/true"),
                options: ChildProcessOptions(inheritedDescriptors: [channel.childDescriptor])
            )
            channel.closeChildEnd()
            #expect(channel.childDescriptor == -1)
            channel.closeChildEnd()  // Twice does nothing.
            _ = try #require(child.waitForExit(timeout: .seconds(30)))
            let start = ContinuousClock.now
            #expect(channel.call(.didBecomeActive, timeout: .seconds(30)) == .closed)
            #expect(ContinuousClock.now - start < .seconds(5))
        }

        @Test func theLateAnswerOfATimedOutCallIsDiscarded() throws {
            let directory = try TemporaryDirectory()
            let log = directory.path.appending("log").string
            let channel = try ClientChannel()
            let child = try Self.spawnFixture(on: channel, log: log, ["CLIENT_FIXTURE_DELAY_MS": "400"])
            defer { child.kill() }
            #expect(channel.call(.willFinishLaunching, timeout: .seconds(30)) == .answered)

            #expect(channel.call(.didFinishLaunching, timeout: .milliseconds(100)) == .timedOut)
            // The fixture answers the first call after 400 ms, and this one 400 ms after it reads it,
            // which it does after sending the late answer: taken for this call's, the late answer would
            // end this call in less than 400 ms.
            let start = ContinuousClock.now
            #expect(channel.call(.didBecomeActive, timeout: .seconds(30)) == .answered)
            let elapsed = ContinuousClock.now - start
            #expect(elapsed >= .milliseconds(400), "\(elapsed)")
            #expect(try Self.lines(log) == ["willFinishLaunching", "didFinishLaunching", "didBecomeActive"])
        }

        @Test func theFixtureStaysAfterWillTerminateWhenAskedUntilSIGTERM() throws {
            let directory = try TemporaryDirectory()
            let log = directory.path.appending("log").string
            let channel = try ClientChannel()
            let child = try Self.spawnFixture(on: channel, log: log, ["CLIENT_FIXTURE_STAY": "1"])
            defer { child.kill() }
            #expect(channel.call(.willTerminate, timeout: .seconds(30)) == .answered)
            #expect(child.waitForExit(timeout: .milliseconds(200)) == nil, "it stays")
            try child.signal(SIGTERM)
            let termination = try #require(child.waitForExit(timeout: .seconds(30)))
            #expect(termination.exit == .signaled(SIGTERM, coreDumped: false))
        }

        @Test func aChildGivenNoUsableChannelSaysSo() throws {
            let fixture = try #require(Self.fixture, "client-fixture is built beside the test bundle")
            // Not set; not a number; a number but no descriptor inherited.
            for (value, status) in [(nil, 2), ("abc", 1), ("3", 1)] as [(String?, Int32)] {
                var environment = Self.sanitizerEnvironment
                environment[ClientChannel.environmentName] = value
                let child = try ChildProcess.spawn(ProcessSpecification(executable: fixture, environment: environment))
                let termination = try #require(child.waitForExit(timeout: .seconds(30)))
                #expect(termination.exit == .exited(status: status), "\(value ?? "unset")")
            }
        }

        // MARK: The system's end alone, this test as the child

        @Test func answersOfOtherSequencesAndOtherDatagramsAreDiscarded() throws {
            let channel = try ClientChannel()
            let child = channel.childDescriptor

            // Waiting before the call: a stale answer, datagrams that are not answers, then its own.
            for text in ["0 done", "1 dome", "x done", "", "+1 done", String(repeating: "1", count: 70) + " done", "1 done"] {
                try Self.send(text, on: child)
            }
            #expect(channel.call(.didBecomeActive, timeout: .seconds(30)) == .answered)
            #expect(try Self.receive(on: child) == "1 didBecomeActive")

            // Unanswered: timed out; its late answer does not answer the next call.
            #expect(channel.call(.willResignActive, timeout: .milliseconds(50)) == .timedOut)
            #expect(try Self.receive(on: child) == "2 willResignActive")
            try Self.send("2 done", on: child)
            let start = ContinuousClock.now
            #expect(channel.call(.didEnterBackground, timeout: .milliseconds(200)) == .timedOut)
            #expect(ContinuousClock.now - start >= .milliseconds(200))
            #expect(try Self.receive(on: child) == "3 didEnterBackground")

            try Self.send("4 done", on: child)
            #expect(channel.call(.willEnterForeground, timeout: .seconds(30)) == .answered)
            #expect(try Self.receive(on: child) == "4 willEnterForeground")

            // Posts: the same sequence, the level as its name (a warning is never below `warning`).
            #expect(channel.post(.didReceiveMemoryWarning(.critical)))
            #expect(channel.post(.didReceiveMemoryWarning(.warning)))
            #expect(channel.post(.didReceiveMemoryWarning(MemoryWarningLevel(PressureLevel.normal))))
            #expect(try Self.receive(on: child) == "5 didReceiveMemoryWarning critical")
            #expect(try Self.receive(on: child) == "6 didReceiveMemoryWarning warning")
            #expect(try Self.receive(on: child) == "7 didReceiveMemoryWarning warning")
            #expect(channel.call(.willTerminate, timeout: .milliseconds(10)) == .timedOut)
            #expect(try Self.receive(on: child) == "8 willTerminate")
        }

        @Test func aMessageTheChildCannotTakeIsTimedOutAtOnce() throws {
            let channel = try ClientChannel()
            // The child reads nothing: its queue fills.
            var posted = 0
            while channel.post(.didReceiveMemoryWarning(.warning)) {
                posted += 1
                try #require(posted < 100_000)
            }
            #expect(posted > 0)
            let start = ContinuousClock.now
            #expect(channel.call(.didBecomeActive, timeout: .seconds(30)) == .timedOut)
            #expect(ContinuousClock.now - start < .seconds(1))
            // Read: room again.
            #expect(try Self.receive(on: channel.childDescriptor) == "1 didReceiveMemoryWarning warning")
            #expect(channel.post(.didReceiveMemoryWarning(.warning)))
        }

        @Test func aPostDiscardsTheAnswersNobodyWaitsFor() throws {
            let channel = try ClientChannel()
            let child = channel.childDescriptor
            // Answers nobody waits for, until the system's queue is full.
            var sent = 0
            while (try? Self.send("0 done", on: child)) != nil {
                sent += 1
                try #require(sent < 100_000)
            }
            #expect(sent > 0)
            #expect(channel.post(.didBecomeActive))
            try Self.send("1 done", on: child)  // Room again: the post read them.
            #expect(try Self.receive(on: child) == "1 didBecomeActive")
        }

        @Test func concurrentCallsEachGetTheirOwnAnswer() throws {
            let channel = try ClientChannel()
            let child = channel.childDescriptor
            let outcomes = Mutex<[ClientCallback: ClientCallOutcome]>([:])
            let threads = try [ClientCallback.didBecomeActive, .didReceiveMemoryWarning(.critical)].map { callback in
                try PosixThread.start(named: "channel-test") {
                    let outcome = channel.call(callback, timeout: .seconds(30))
                    outcomes.withLock { $0[callback] = outcome }
                }
            }
            // Both messages, then their answers in the reverse order: the first answer in the socket
            // is the later call's, which the earlier call must leave to it.
            let sequences = try (0..<2).map { _ in try #require(ClientMessage.decimal(try Self.receive(on: child).utf8.prefix { $0 != UInt8(ascii: " ") })) }
            for sequence in sequences.sorted(by: >) {
                try Self.send("\(sequence) done", on: child)
            }
            let start = ContinuousClock.now
            for thread in threads { pthread_join(thread, nil) }
            #expect(ContinuousClock.now - start < .seconds(10), "neither waited for its timeout")
            #expect(outcomes.withLock { $0 } == [.didBecomeActive: .answered, .didReceiveMemoryWarning(.critical): .answered])
        }

        @Test func theEnvironmentValueIsTheInheritedDescriptorsNumber() {
            #expect(ClientChannel.environmentName == "MEMORY_PRESSURE_CLIENT_FD")
            #expect(ClientChannel.environmentName == MemoryPressureClient.environmentName)
            #expect(ClientChannel.environmentValue(inheritedAt: 0) == "3")
            #expect(ClientChannel.environmentValue(inheritedAt: 2) == "5")
        }

        // MARK: Both ends in this process

        @Test func aClientAnswersEveryCallStopsAndStartsAgain() throws {
            let channel = try ClientChannel()
            let client = try MemoryPressureClient(descriptor: dup(channel.childDescriptor))
            channel.closeChildEnd()
            #expect(fcntl(client.descriptor, F_GETFD) & FD_CLOEXEC != 0, "its children do not inherit it")
            #expect(client.wait() == nil, "never started")
            let delegate = RecordingClientDelegate()

            try client.start(delegate: delegate)
            #expect(channel.call(.didBecomeActive, timeout: .seconds(30)) == .answered)
            #expect(channel.call(.didReceiveMemoryWarning(.critical), timeout: .seconds(30)) == .answered)
            #expect(delegate.calls == ["didBecomeActive", "didReceiveMemoryWarning critical"])

            client.stop()
            #expect(client.wait() == .stopped)
            // Stopped: nothing answers, but the message waits in the socket for the next start.
            #expect(channel.call(.willResignActive, timeout: .milliseconds(100)) == .timedOut)
            try client.start(delegate: delegate)
            #expect(channel.call(.didEnterBackground, timeout: .seconds(30)) == .answered)
            #expect(delegate.calls.suffix(2) == ["willResignActive", "didEnterBackground"])

            // willTerminate answered: the client reads no more.
            #expect(channel.call(.willTerminate, timeout: .seconds(30)) == .answered)
            #expect(client.wait() == .terminated)
            #expect(channel.call(.willEnterForeground, timeout: .milliseconds(100)) == .timedOut)
            #expect(delegate.calls.last == "willTerminate")
        }

        @Test func aClientStoppedFromItsCallbackAnswersItFirst() throws {
            let channel = try ClientChannel()
            let client = try MemoryPressureClient(descriptor: dup(channel.childDescriptor))
            channel.closeChildEnd()
            try client.start(delegate: StoppingClientDelegate(client: client))
            #expect(channel.call(.willResignActive, timeout: .seconds(30)) == .answered)
            #expect(client.wait() == .stopped)
        }

        @Test func aClientWhoseSystemGoesAwayEnds() throws {
            var channel: ClientChannel? = try ClientChannel()
            let client = try MemoryPressureClient(descriptor: dup(channel!.childDescriptor))
            try client.start(delegate: RecordingClientDelegate())
            #expect(channel?.call(.didBecomeActive, timeout: .seconds(30)) == .answered)
            channel = nil  // Both of its descriptors closed.
            #expect(client.wait() == .channelClosed)
        }

        // MARK: The client's descriptor

        @Test func environmentValuesThatAreNotDescriptorNumbersAreRefused() throws {
            for value in ["", "abc", "-1", "+3", " 3", "3 ", "3x", "0x3", "2147483648", "99999999999999999999999"] {
                let error = #expect(throws: MemoryPressureClientError.self) {
                    try MemoryPressureClient.descriptor(fromEnvironmentValue: value)
                }
                #expect(error?.code == .malformedDescriptorNumber, "\(value.debugDescription)")
                #expect(error?.description.contains("MEMORY_PRESSURE_CLIENT_FD=\(value.debugDescription) is not a descriptor number") == true)
            }
            #expect(try MemoryPressureClient.descriptor(fromEnvironmentValue: "3") == 3)
            #expect(try MemoryPressureClient.descriptor(fromEnvironmentValue: "2147483647") == Int32.max)
        }

        @Test func descriptorsThatAreNotUnixSequencedPacketSocketsAreRefused() throws {
            func refusal(_ descriptor: Int32) -> MemoryPressureClientError? {
                #expect(throws: MemoryPressureClientError.self) { try MemoryPressureClient(descriptor: descriptor) }
            }
            #expect(fcntl(9_999, F_GETFD) < 0)
            #expect(refusal(9_999)?.description.contains("is not open") == true)
            #expect(refusal(-1)?.code == .unusableDescriptor)

            var ends: (Int32, Int32) = (-1, -1)
            try withUnsafeMutableBytes(of: &ends) { buffer in
                guard pipe(buffer.baseAddress!.assumingMemoryBound(to: Int32.self)) == 0 else { throw Errno(rawValue: errno) }
            }
            #expect(refusal(ends.0)?.description.contains("is not a socket") == true)
            close(ends.0)
            close(ends.1)

            for (type, name) in [(SOCK_STREAM, "SOCK_STREAM"), (SOCK_DGRAM, "SOCK_DGRAM")] {
                try withUnsafeMutableBytes(of: &ends) { buffer in
                    guard socketpair(AF_UNIX, Int32(type.rawValue), 0, buffer.baseAddress!.assumingMemoryBound(to: Int32.self)) == 0 else {
                        throw Errno(rawValue: errno)
                    }
                }
                let error = refusal(ends.0)
                #expect(error?.code == .unusableDescriptor)
                #expect(error?.description.contains("is a Unix socket of type \(name), not SOCK_SEQPACKET") == true)
                close(ends.0)
                close(ends.1)
            }

            let internet = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            if internet >= 0 {
                #expect(refusal(internet)?.description.contains("is not a Unix socket") == true)
                close(internet)
            }
        }

        @Test func withoutTheVariableThereIsNoClient() throws {
            guard getenv(MemoryPressureClient.environmentName) == nil else {
                try Test.cancel("this process was started with \(MemoryPressureClient.environmentName) set")
            }
            #expect(try MemoryPressureClient.fromEnvironment() == nil)
        }

        // MARK: Helpers

        /// The `client-fixture` executable beside the test bundle; nil when it is not there.
        static let fixture = executableBesideTheTests(named: "client-fixture")

        /// Starts the fixture with `channel`'s child end as its descriptor 3, and closes that end here.
        static func spawnFixture(on channel: ClientChannel, log: String, _ environment: [String: String] = [:]) throws -> ChildProcess {
            let fixture = try #require(Self.fixture, "client-fixture is built beside the test bundle")
            var environment = environment.merging(sanitizerEnvironment) { given, _ in given }
            environment["CLIENT_FIXTURE_LOG"] = log
            environment[ClientChannel.environmentName] = ClientChannel.environmentValue(inheritedAt: 0)
            let child = try ChildProcess.spawn(
                ProcessSpecification(executable: fixture, environment: environment),
                options: ChildProcessOptions(inheritedDescriptors: [channel.childDescriptor])
            )
            channel.closeChildEnd()
            return child
        }

        /// What this process has of `LD_PRELOAD` and the sanitizers' options: under a sanitizer
        /// (tools/ci-sanitizers) the fixture is built with it, and gets what the tests get preloaded.
        static var sanitizerEnvironment: [String: String] {
            var environment: [String: String] = [:]
            for name in ["LD_PRELOAD", "TSAN_OPTIONS", "ASAN_OPTIONS"] {
                environment[name] = getenv(name).map { String(cString: $0) }
            }
            return environment
        }

        /// The lines of the fixture's log.
        static func lines(_ log: String) throws -> [String] {
            try KernelFile.read(FilePath(log)).split(separator: "\n").map(String.init)
        }

        /// Sends `text` as one datagram on `descriptor`, without waiting; throws when it cannot.
        static func send(_ text: String, on descriptor: Int32) throws {
            var text = text
            let sent = text.withUTF8 { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
            guard sent >= 0 else { throw Errno(rawValue: errno) }
        }

        /// The next datagram on `descriptor`, waiting for it at most 30 s.
        static func receive(on descriptor: Int32) throws -> String {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 30_000) == 1 else { throw Errno.timedOut }
            return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
                let count = recv(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
                guard count >= 0 else { throw Errno(rawValue: errno) }
                return String(decoding: UnsafeRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[..<count]), as: UTF8.self)
            }
        }
    }
}

/// The client's parsing of what the system sends, and the system's of what the client answers.
struct ClientChannelMessageTests {
    @Test func everyCallbackTheSystemSendsIsReadAsItself() {
        let callbacks: [ClientCallback] = [
            .willFinishLaunching, .didFinishLaunching, .didBecomeActive, .willResignActive, .didEnterBackground,
            .willEnterForeground, .willTerminate, .didReceiveMemoryWarning(.warning), .didReceiveMemoryWarning(.critical),
        ]
        for (sequence, sent) in zip([UInt64(1), 42, .max, 7, 8, 9, 10, 11, 12], callbacks) {
            let text = ClientMessage(sequence: sequence, callback: sent).datagram
            #expect(ClientMessage(Array(text.utf8)) == .init(sequence: sequence, callback: sent), "\(text)")
        }
        #expect(ClientMessage(sequence: 18, callback: nil).answer == "18 done")
        #expect(ClientMessage(sequence: 3, callback: .didReceiveMemoryWarning(.critical)).datagram == "3 didReceiveMemoryWarning critical")
        #expect(ClientMessage(sequence: 4, callback: .willTerminate).datagram == "4 willTerminate")
    }

    @Test func theSystemsLevelsAreSentAsAWarningOrCritical() {
        #expect(MemoryWarningLevel(PressureLevel.normal) == .warning)
        #expect(MemoryWarningLevel(PressureLevel.warning) == .warning)
        #expect(MemoryWarningLevel(PressureLevel.critical) == .critical)
    }

    @Test func aMessageWithASequenceIsAnsweredEvenWhenItsCallbackIsNotKnown() {
        for text in [
            "7 didSomethingNew", "7 didBecomeActive extra", "7 didReceiveMemoryWarning",
            "7 didReceiveMemoryWarning urgent", "7 didReceiveMemoryWarning warning extra", "7 ",
            "7 didbecomeactive", "7 didReceiveMemoryWarning Warning",
        ] {
            #expect(ClientMessage(Array(text.utf8)) == .init(sequence: 7, callback: nil), "\(text)")
        }
    }

    @Test func aDatagramWithoutASequenceIsDropped() {
        let datagrams: [[UInt8]] = [
            "", "7", "didBecomeActive", "x didBecomeActive", "-1 didBecomeActive", "+1 didBecomeActive",
            " 1 didBecomeActive", "1didBecomeActive", "18446744073709551616 willTerminate", "0x1 willTerminate",
        ].map { Array($0.utf8) } + [[0xFF, 0x20, 0x64], [0x31, 0xFF, 0x20, 0x64]]
        for datagram in datagrams {
            #expect(ClientMessage(datagram) == nil, "\(datagram)")
        }
        #expect(ClientMessage(Array("18446744073709551615 willTerminate".utf8))?.sequence == .max)
        #expect(ClientMessage(Array("0007 willTerminate".utf8))?.sequence == 7)
    }

    @Test func theSystemReadsOnlyDoneAnswers() {
        #expect(ClientMessage.answeredSequence(Array("5 done".utf8)) == 5)
        #expect(ClientMessage.answeredSequence(Array("18446744073709551615 done".utf8)) == .max)
        for text in ["done", " done", "5  done", "5 done\n", "5 Done", "5done", "-5 done", "18446744073709551616 done", "5 done 5"] {
            #expect(ClientMessage.answeredSequence(Array(text.utf8)) == nil, "\(text.debugDescription)")
        }
    }
}

/// Records the callbacks; shared with the test, so `Sendable`.
final class RecordingClientDelegate: MemoryPressureClientDelegate, Sendable {
    private let recorded = Mutex<[String]>([])

    var calls: [String] { recorded.withLock { $0 } }

    private func record(_ callback: String) { recorded.withLock { $0.append(callback) } }

    func willFinishLaunching() { record("willFinishLaunching") }
    func didFinishLaunching() { record("didFinishLaunching") }
    func didBecomeActive() { record("didBecomeActive") }
    func willResignActive() { record("willResignActive") }
    func didEnterBackground() { record("didEnterBackground") }
    func willEnterForeground() { record("willEnterForeground") }
    func willTerminate() { record("willTerminate") }
    func didReceiveMemoryWarning(level: MemoryWarningLevel) { record("didReceiveMemoryWarning \(level)") }
}

/// Stops its client from its `willResignActive`.
final class StoppingClientDelegate: MemoryPressureClientDelegate {
    private let client: MemoryPressureClient

    init(client: MemoryPressureClient) {
        self.client = client
    }

    func willResignActive() { client.stop() }
}

/// The executable `name` built beside the test bundle (`/proc/self/exe`); nil when it is not there.
func executableBesideTheTests(named name: String) -> String? {
    let target = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 4_096) { buffer -> String? in
        let count = readlink("/proc/self/exe", buffer.baseAddress!, buffer.count)
        guard count > 0, count < buffer.count else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: count), as: UTF8.self)
    }
    guard let target else { return nil }
    let path = FilePath(target).removingLastComponent().appending(name).string
    return access(path, X_OK) == 0 ? path : nil
}
