@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import Testing

/// Shutting a system down: every app terminated, running ones with `willTerminate`; and the
/// system's synchronous observers.
@Suite(.exclusiveMemoryUse)
struct MemorySystemShutdownTests {
    /// Registers `name` with a delegate that logs its callbacks under `log` and saves its progress
    /// on entering the background (page 1) and in `willTerminate` (page 2).
    func register(_ name: String, in system: MemorySystem, log: SharedLog<String>, configuration: AppConfiguration) throws -> App {
        try system.register(.test(name), configuration: configuration) {
            let delegate = RecordingDelegate(log: log)
            delegate.onDidEnterBackground = { app in try? app.saveState(SavedProgress(app: name, page: 1)) }
            delegate.onWillTerminate = { app in try? app.saveState(SavedProgress(app: name, page: 2)) }
            return delegate
        }
    }

    /// An active app, a background app with an open task, and a suspended app.
    func launchThreeApps(in system: MemorySystem, logs: [String: SharedLog<String>]) async throws {
        let longTasks = try AppConfiguration(terminationDeadline: .seconds(30), backgroundTaskTimeLimit: .seconds(600))
        let active = try register("active", in: system, log: logs["active"]!, configuration: longTasks)
        try await active.launch()
        let working = try register("working", in: system, log: logs["working"]!, configuration: longTasks)
        try await working.launch()
        _ = try working.beginBackgroundTask { _ in }
        try await working.enterBackground()
        let suspended = try register("suspended", in: system, log: logs["suspended"]!, configuration: longTasks)
        try await suspended.launch()
        try await suspended.enterBackground()
        #expect(system.apps.map(\.state) == [.active, .suspended, .background])
    }

    @Test(arguments: [false, true])
    func shutDownTerminatesEveryAppAndRunningOnesGetWillTerminate(inCancelledTask: Bool) async throws {
        let archiveDirectory = try TemporaryDirectory()
        let system = try MemorySystem(configuration: .test(targetBytes: 64 * mebibyte, archiveIn: archiveDirectory))
        let logs = ["active": SharedLog<String>(), "working": SharedLog<String>(), "suspended": SharedLog<String>()]
        try await launchThreeApps(in: system, logs: logs)

        let shutdown = Task {
            // A cancelled shutdown must still wait for what it started.
            if inCancelledTask { while !Task.isCancelled { await Task.yield() } }
            return await system.shutDown()
        }
        if inCancelledTask { shutdown.cancel() }
        let records = await shutdown.value

        #expect(Set(records.map(\.app)) == [.test("active"), .test("working"), .test("suspended")])
        #expect(records.allSatisfy { $0.reason == .explicit && $0.step == nil })
        #expect(Dictionary(uniqueKeysWithValues: records.map { ($0.app.rawValue, $0.state) })
            == ["active": .active, "working": .background, "suspended": .suspended])
        #expect(system.apps.allSatisfy { $0.state == .notRunning && $0.terminationReason == .explicit })
        #expect(logs["active"]!.all.last == "willTerminate")
        #expect(logs["working"]!.all.last == "willTerminate")
        #expect(!logs["suspended"]!.all.contains("willTerminate"))
        #expect(Set(system.terminations.map(\.app)) == Set(records.map(\.app)))

        // What each app saved last is handed back on its next launch.
        let archive = try #require(system.stateArchive)
        for (name, page) in ["active": 2, "working": 2, "suspended": 1] {
            let bytes = try #require(try archive.load(for: .test(name)))
            var options = LaunchOptions()
            options.restoredState = bytes
            #expect(try options.restoredState(as: SavedProgress.self) == SavedProgress(app: name, page: page))
        }
        #expect(await system.shutDown().isEmpty)
        withExtendedLifetime(archiveDirectory) {}
    }

    @Test func observersSeeEveryEventUntilCancelled() async throws {
        let source = ScriptedSampleSource(residentBytes: 0)
        var configuration = try MemorySystem.Configuration.test(targetBytes: 64 * mebibyte)
        configuration.monitor.sources = [source]
        let system = try MemorySystem(configuration: configuration)
        let seen = Mutex<[MemorySystemEvent]>([])
        let observation = system.events.observe { event in seen.withLock { $0.append(event) } }
        let levels = Mutex<[PressureLevel]>([])
        let levelObservation = system.monitor.events.observe { event in
            if let change = event.change { levels.withLock { $0.append(change.level) } }
        }
        let events = system.events.stream()
        let run = try await system.running {
            source.set(residentBytes: configuration.budget.bytes(enteringAbove: .warning) + 1, stall: nil)
            return await events.first(within: .seconds(30)) { if case .ladderRun = $0 { true } else { false } }
        }
        guard case .ladderRun(let ladderRun) = run else {
            Issue.record("no ladder run")
            return
        }
        let observed = seen.withLock { $0 }
        #expect(levels.withLock { $0 }.contains(.warning))
        #expect(observed.contains { if case .ladderRun(let run) = $0 { run == ladderRun } else { false } })

        observation.cancel()
        levelObservation.cancel()
        let app = try system.register(.test("late")) { IdleDelegate() }
        try await app.launch()
        #expect(await system.shutDown().count == 1)
        #expect(seen.withLock { $0.count } == observed.count)
    }
}
