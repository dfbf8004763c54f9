#if canImport(Glibc)
import Glibc
#endif
@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
import Logging
import MemoryPressureTestKit
import MemoryTestSupport
import SystemPackage
import Testing

/// A write to a file that sets the cgroup's limit is seen as it is made (issue 37): the monitor
/// watches the limit files from its cgroup up (inotify), reads the limits at once, and the budget
/// changes at the instant of the write on the monitor's clock, with no step and no check due;
/// without the watch, only the next check brings it. Over fake v1, v2 and hybrid trees, with the
/// clock stepped, never slept on. Monitors run here, so the suite takes the process's memory alone.
@Suite(.exclusiveMemoryUse)
struct LimitWriteWatchTests {
    static let gibibyte = 1 << 30
    static let physical = 64 * gibibyte

    struct Case: Sendable, CustomTestStringConvertible {
        var layout: LiveLimitTree.Layout
        var level: LiveLimitTree.Level
        var testDescription: String { "\(layout) \(level)" }
    }

    static let cases = LiveLimitTree.Layout.allCases.flatMap { layout in
        [LiveLimitTree.Level.own, .ancestor].map { Case(layout: layout, level: $0) }
    }

    /// The limit files of `tree`'s cgroup, from it up to the top of the tree.
    static func limitFiles(_ tree: LiveLimitTree) throws -> [FilePath] {
        try #require(tree.discovery.memory).limitFiles()
    }

    /// The modification time of `path`, since the Unix epoch.
    static func modificationTime(_ path: FilePath) throws -> Duration {
        var status = stat()
        try #require(stat(path.string, &status) == 0)
        return .seconds(status.st_mtim.tv_sec) + .nanoseconds(status.st_mtim.tv_nsec)
    }

    @Test func theLimitFilesRunFromTheCgroupToTheTopOfWhatTheProcessSees() throws {
        let v2 = try LiveLimitTree(.v2)
        let root = v2.fake.root.path
        #expect(try Self.limitFiles(v2) == [
            root.appending("pod/ctr/memory.max"), root.appending("pod/ctr/memory.high"),
            root.appending("pod/memory.max"), root.appending("pod/memory.high"),
        ])
        let v1 = try LiveLimitTree(.v1)
        #expect(try Self.limitFiles(v1) == [
            v1.fake.root.path.appending("memory/pod/ctr/memory.limit_in_bytes"), v1.fake.root.path.appending("memory/pod/memory.limit_in_bytes"),
        ])
        // A cgroup whose files are not there (another machine's paths) has none to watch, and says so.
        let elsewhere = ControlGroupDiscovery(layout: .v1, memory: .v1(ControlGroupV1(directory: "/nonexistent/memory/app")))
        #expect(ControlGroupEventTargets.targets(of: elsewhere).limitFiles == .off(reason: "no limit file found in /nonexistent/memory/app or above it"))
        #expect(ControlGroupEventTargets.targets(of: v1.discovery).limitFiles == .paths(try Self.limitFiles(v1)))
    }

    @Test(arguments: cases)
    func aWriteToALimitFileChangesTheBudgetAtTheInstantOfTheWrite(_ testCase: Case) async throws {
        let tree = try LiveLimitTree(testCase.layout)
        let budget = try MemoryBudget.resolve(.automatic(ratio: 0.5), limits: tree.limits(physicalBytes: Self.physical))
        let (logger, messages) = recordingLogger()
        let clock = ManualClock()
        // The checks an hour apart, no kernel event but the watch: only the watch can bring the change.
        let monitor = LiveLimitTests.monitor(
            tree, budget: budget, checkInterval: .seconds(3600), clock: clock,
            targets: .given(memoryEvents: nil, pressureLevelDirectory: nil, limitFiles: try Self.limitFiles(tree)), logger: logger
        )
        let changes = LiveLimitTests.Changes(monitor)
        try monitor.start()
        defer { monitor.stop() }
        #expect(await monitor.hasSampledAtTheTimeNow())
        #expect(changes.all.isEmpty)

        let started = clock.now
        try tree.setLimitInPlace(2 * Self.gibibyte, on: testCase.level)
        await monitor.lookedAtTheTimeNow()
        // Seen with the clock where it was at the write: no check was due, no step was made.
        #expect(changes.all.count == 1)
        let change = try #require(changes.all.first)
        #expect(change.time == started)
        #expect(change.budget.totalBytes == Self.gibibyte)
        #expect(monitor.budget == change.budget)
        // The write's time is the file's own, and the log line gives it with the delay.
        let written = try Self.modificationTime(tree.limitFile(on: testCase.level))
        #expect(change.limitWriteTime == written)
        let delay = try #require(change.limitWriteDelay)
        #expect(delay >= .zero)
        let line = messages.messages(atLeast: .notice).first { $0.contains("follows the cgroup's limit") }
        #expect(line?.contains("limit file written \(BudgetChange.utcText(written)), seen ") == true)

        // The sample that follows is judged against the new budget, taken at the same instant.
        #expect(await monitor.hasSampledAtTheTimeNow())
        #expect(monitor.latestSample?.time == started)

        // Raised again: seen the same way, one more change.
        try tree.setLimitInPlace(nil, on: testCase.level)
        await monitor.lookedAtTheTimeNow()
        #expect(changes.all.count == 2)
        #expect(changes.all.last?.budget.totalBytes == Self.physical / 2)
    }

    /// The control: without the watch, the same write waits for the next check.
    @Test(arguments: [LiveLimitTree.Layout.v1, .v2])
    func withoutTheWatchTheWriteWaitsForTheNextCheck(_ layout: LiveLimitTree.Layout) async throws {
        let tree = try LiveLimitTree(layout)
        let budget = try MemoryBudget.resolve(.automatic(ratio: 0.5), limits: tree.limits(physicalBytes: Self.physical))
        let clock = ManualClock()
        let monitor = LiveLimitTests.monitor(tree, budget: budget, checkInterval: .seconds(3600), clock: clock, targets: .none)
        let changes = LiveLimitTests.Changes(monitor)
        try monitor.start()
        defer { monitor.stop() }
        #expect(await monitor.hasSampledAtTheTimeNow())

        try tree.setLimitInPlace(2 * Self.gibibyte, on: .own)
        await monitor.lookedAtTheTimeNow()
        #expect(await clock.step(by: .seconds(3599), times: 1, sampledBy: monitor))
        #expect(changes.all.isEmpty)
        #expect(await clock.step(by: .seconds(1), times: 1, sampledBy: monitor))
        #expect(changes.all.count == 1)
        #expect(changes.all.first?.budget.totalBytes == Self.gibibyte)
    }

    @Test func theWatchIsListedWithItsFilesAndAMissingFileIsRefused() throws {
        let tree = try LiveLimitTree(.v2)
        let files = try Self.limitFiles(tree)
        let armed = KernelEventSourceStatus.probe(trigger: nil, targets: .given(memoryEvents: nil, pressureLevelDirectory: nil, limitFiles: files))
        let status = try #require(armed.first { $0.kind == .limitFiles })
        #expect(status.state == .armed)
        #expect(status.path == files.first)
        #expect(status.detail == files.map(\.string).joined(separator: ", "))

        let missing = tree.fake.root.path.appending("gone/memory.max")
        let refused = KernelEventSourceStatus.probe(trigger: nil, targets: .given(memoryEvents: nil, pressureLevelDirectory: nil, limitFiles: files + [missing]))
        let refusal = try #require(refused.first { $0.kind == .limitFiles })
        #expect(refusal.state == .refused)
        #expect(refusal.path == missing)
        #expect(refusal.description.contains("No such file or directory"))
    }

    @Test func aWriteTimeIsGivenInUTCToTheMillisecond() {
        #expect(BudgetChange.utcText(.seconds(1_000_000_000) + .milliseconds(7)) == "2001-09-09T01:46:40.007Z")
        #expect(BudgetChange.utcText(.seconds(1_795_837_692) + .nanoseconds(200_938_448)) == "2026-11-28T03:48:12.200Z")
    }
}
