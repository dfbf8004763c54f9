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
import Synchronization
import SystemPackage
import Testing

// Nested in the serialized ChildProcessTests: its checks that no child cgroup is left count every
// cgroup this process made, so no other test may make children while they run.
extension ChildProcessTests {
    /// Child processes as apps, through the public API, against the real kernel: each state mapped to
    /// the freezer and `oom_score_adj`, terminations as lmkd makes them, processes that end by
    /// themselves, the warning channels, and bad input.
    @Suite(.serialized)
    struct ProcessAppTests {
        /// Short deadlines, so that a test that waits for one does not take 5 s; long enough for a shell
        /// to run its SIGTERM trap on a loaded machine.
        static let configuration = try! AppConfiguration(
            backgroundDeadline: .seconds(2), terminationDeadline: .milliseconds(1500), backgroundTaskTimeLimit: .seconds(30)
        )

        /// A system on `clock` (the continuous clock, or a manual one the test steps), keeping the
        /// apps' states in `archive` when one is given.
        static func system(
            warningAt residentBytes: ScriptedSampleSource? = nil, clock: any LibraryClock = SystemClock(), archive: TemporaryDirectory? = nil
        ) throws -> MemorySystem {
            var configuration = try MemorySystem.Configuration.test(targetBytes: 256 * mebibyte)
            configuration.clock = clock
            configuration.stateArchiveDirectory = archive?.path
            if let residentBytes { configuration.monitor.sources = [residentBytes] }
            configuration.logger = silentLogger
            return try MemorySystem(configuration: configuration)
        }

        /// `client-fixture` registered in `system` as `name` on the client channel, with `extra` in
        /// its environment, logging its callbacks to a file of `directory`: the app and the log's path.
        static func registerClientFixture(
            _ name: String, in system: MemorySystem, logIn directory: TemporaryDirectory, environment extra: [String: String] = [:]
        ) throws -> (app: App, log: String) {
            let fixture = try #require(ClientChannelTests.fixture, "client-fixture is built beside the test bundle")
            let log = directory.path.appending("callbacks-\(name)").string
            var environment = ClientChannelTests.sanitizerEnvironment.merging(extra) { _, given in given }
            environment["CLIENT_FIXTURE_LOG"] = log
            let app = try system.register(
                .test(name), process: ProcessSpecification(executable: fixture, environment: environment),
                configuration: configuration, options: ProcessAppOptions(channel: .client)
            )
            return (app, log)
        }

        // MARK: The lifecycle in the kernel

        @Test(arguments: [nil, FreezeMechanism.stopSignal])
        func suspensionFreezesTheProcessAndTheForegroundThawsIt(freezer: FreezeMechanism?) async throws {
            let system = try Self.system()
            let app = try system.register(
                .test("spinner"), process: .shell("while :; do :; done"), configuration: Self.configuration,
                options: ProcessAppOptions(freezeMechanism: freezer)
            )
            #expect(try await app.launch() == .active)
            let running = try #require(system.process(of: app.identifier))
            #expect(!running.isFrozen)
            #expect(try oomScoreAdjustment(running.pid) == 0, "the foreground is the last the kernel would pick")
            if let freezer { #expect(running.freezeMechanism == freezer) }

            #expect(try await app.enterBackground() == .suspended)
            let suspended = try #require(system.process(of: app.identifier))
            #expect(suspended.pid == running.pid)
            #expect(suspended.isFrozen)
            #expect(try oomScoreAdjustment(running.pid) == AppImportance.service.oomScoreAdjustmentOfASuspendedApp)
            let frozenAt = try cpuTicks(running.pid)
            // The kernel's own time is the subject (a real child's CPU time while the kernel holds
            // it frozen): a fixed sleep.
            try await Task.sleep(for: .milliseconds(300))
            #expect(try cpuTicks(running.pid) == frozenAt, "a frozen process runs no code")

            #expect(try await app.enterForeground() == .active)
            #expect(system.process(of: app.identifier)?.isFrozen == false)
            #expect(try oomScoreAdjustment(running.pid) == 0)
            #expect(await eventually { (try? cpuTicks(running.pid)).map { $0 > frozenAt } ?? false }, "it runs again")

            #expect(try await app.terminate(reason: .explicit) == .notRunning)
            #expect(await eventually { !isAlive(running.pid) }, "killed and reaped")
            #expect(system.process(of: app.identifier) == nil)
            let record = try #require(await eventuallyRecord(of: app.identifier, in: system))
            #expect(record.reason == .explicit)
            guard case .signaled(let signal, _, _, _) = record.processExit else {
                Issue.record("a spinning shell ends by our signal, not \(String(describing: record.processExit))")
                return
            }
            #expect([SIGTERM, SIGKILL].contains(signal))
        }

        @Test func aSuspendedProcessIsKilledAtOnceWithoutACallback() async throws {
            let directory = try TemporaryDirectory()
            let heard = directory.path.appending("heard").string
            let system = try Self.system()
            let app = try system.register(
                .test("quiet"), process: .shell("trap 'echo term >> \(heard)' TERM; while :; do sleep 0.05; done"),
                configuration: Self.configuration
            )
            try await app.launch()
            #expect(try await app.enterBackground() == .suspended)
            let pid = try #require(system.process(of: app.identifier)).pid
            let start = ContinuousClock.now
            #expect(try await app.terminate(reason: .systemPressure) == .notRunning)
            #expect(await eventually { !isAlive(pid) })
            #expect(ContinuousClock.now - start < Self.configuration.terminationDeadline * 10)
            let record = try #require(await eventuallyRecord(of: app.identifier, in: system))
            #expect(record.state == .suspended)
            #expect(record.processExit == .signaled(signal: SIGKILL, coreDumped: false, bySystem: true, byKernelOOMKiller: false)
                || record.processExit == .signaled(signal: SIGKILL, coreDumped: false, bySystem: true, byKernelOOMKiller: nil))
            #expect((try? KernelFile.read(FilePath(heard))) == nil, "a suspended app runs no code, not even a SIGTERM handler")
        }

        @Test func aRunningProcessGetsSIGTERMAndDiesAtTheDeadlineWhenItIgnoresIt() async throws {
            let directory = try TemporaryDirectory()
            let heard = directory.path.appending("heard").string
            let system = try Self.system()
            let polite = try system.register(
                .test("polite"), process: .shell("trap 'echo term >> \(heard); exit 0' TERM; while :; do sleep 0.05; done"),
                configuration: Self.configuration
            )
            let stubborn = try system.register(
                .test("stubborn"), process: .shell("trap '' TERM; while :; do sleep 0.05; done"), configuration: Self.configuration
            )
            try await polite.launch()
            try await stubborn.launch()
            let stubbornPid = try #require(system.process(of: stubborn.identifier)).pid

            #expect(try await polite.terminate(reason: .explicit) == .notRunning)
            #expect(try KernelFile.read(FilePath(heard)).contains("term"), "a running app hears SIGTERM")
            let politeRecord = try #require(await eventuallyRecord(of: polite.identifier, in: system))
            #expect(politeRecord.processExit == .exited(status: 0))
            #expect(politeRecord.footprintBytes > 0, "what it held while it ran, though it exited on SIGTERM before the record")

            let start = ContinuousClock.now
            try await stubborn.terminate(reason: .explicit)
            #expect(await eventually { !isAlive(stubbornPid) })
            #expect(ContinuousClock.now - start >= Self.configuration.terminationDeadline / 2, "it had until its deadline")
            let record = try #require(await eventuallyRecord(of: stubborn.identifier, in: system))
            guard case .signaled(SIGKILL, _, true, _) = record.processExit else {
                Issue.record("killed by the system's SIGKILL, not \(String(describing: record.processExit))")
                return
            }
        }

        // MARK: The ladder

        @Test func theLadderKillsTheLargestSuspendedProcessAndStopsOnceItsMemoryIsBack() async throws {
            let source = ScriptedSampleSource(residentBytes: 0)
            let clock = ManualClock()
            let system = try Self.system(warningAt: source, clock: clock)
            let directory = try TemporaryDirectory()
            let filled = directory.path.appending("filled").string
            // A shell holding 48 MiB in a variable, and one holding next to nothing.
            let large = try system.register(
                .test("large"), process: .shell("x=$(head -c 50331648 /dev/zero | tr '\\0' a); touch \(filled); while :; do sleep 1; done"),
                configuration: Self.configuration
            )
            let small = try system.register(.test("small"), process: .shell("while :; do sleep 1; done"), configuration: Self.configuration)
            for app in [large, small] {
                try await app.launch()
            }
            #expect(await eventually { access(filled, F_OK) == 0 }, "the variable is filled")
            #expect(system.footprint(of: large.identifier).processBytes >= 44 * mebibyte)
            for app in [large, small] {
                #expect(try await app.enterBackground() == .suspended)
            }
            let largePid = try #require(system.process(of: large.identifier)).pid
            let smallBytes = system.footprint(of: small.identifier).processBytes
            #expect(smallBytes > 0 && smallBytes < 16 * mebibyte)
            // Over critical with the large process; under the target without it.
            let budget = system.budget
            let resident = budget.bytes(enteringAbove: .critical) - 40 * mebibyte
            #expect(resident + smallBytes < system.targetBytes)
            try await system.running {
                source.set(residentBytes: resident, stall: nil)
                #expect(await system.ladderHasHandledASampleAtTheTimeNow())
                #expect(await eventually { large.state == .notRunning })
                #expect(await eventually { !isAlive(largePid) })
                // Fifteen samples more, the ladder done with each: at that instant, the small app
                // is still there.
                #expect(await clock.step(by: .milliseconds(20), times: 15, handledBy: system))
            }
            #expect(small.state == .suspended, "one kill was enough: the ladder measured once its memory was back")
            let record = try #require(system.terminations.first { $0.app == large.identifier })
            #expect(record.reason == .systemPressure)
            #expect(record.step == .terminateSuspended)
            #expect(record.footprintBytes >= 44 * mebibyte)
            await system.shutDown()
        }

        // MARK: Processes that end by themselves

        @Test func aProcessThatExitsOrCrashesIsATerminationWithItsReason() async throws {
            let system = try Self.system()
            let exits = try system.register(.test("exits"), process: .shell("sleep 0.1; exit 3"), configuration: Self.configuration)
            let crashes = try system.register(.test("crashes"), process: .shell("sleep 0.1; kill -SEGV $$"), configuration: Self.configuration)
            try await exits.launch()
            try await crashes.launch()
            #expect(await eventually { exits.state == .notRunning && crashes.state == .notRunning })
            #expect(exits.terminationReason == .processExited)
            #expect(crashes.terminationReason == .processKilled)
            #expect(try #require(await eventuallyRecord(of: exits.identifier, in: system)).processExit == .exited(status: 3))
            let crash = try #require(await eventuallyRecord(of: crashes.identifier, in: system))
            guard case .signaled(SIGSEGV, _, false, _) = crash.processExit else {
                Issue.record("a crash is its own signal, not ours: \(String(describing: crash.processExit))")
                return
            }
            // Its next launch hears why it ended, and runs again.
            #expect(try await exits.launch() == .active)
            #expect(exits.launchOptions.previousTermination == .processExited)
            await system.shutDown()
        }

        @Test func aProcessAppInTheBackgroundThatRunsIsNeverSuspended() async throws {
            let clock = ManualClock()
            let system = try Self.system(clock: clock)
            let app = try system.register(
                .test("indexer"), process: .shell("while :; do sleep 0.05; done"), configuration: Self.configuration,
                options: ProcessAppOptions(inBackground: .run)
            )
            try await app.launch()
            #expect(try await app.enterBackground() == .background)
            // Past its background deadline: at that instant, still running in the background.
            clock.step(by: Self.configuration.backgroundDeadline + .seconds(1))
            #expect(await system.deadlinesHaveLookedAtTheTimeNow())
            #expect(app.state == .background)
            let status = try #require(system.process(of: app.identifier))
            #expect(!status.isFrozen)
            #expect(try oomScoreAdjustment(status.pid) == AppImportance.service.oomScoreAdjustment(in: .background))
            await system.shutDown()
            #expect(await eventually { !isAlive(status.pid) })
        }

        // MARK: Warnings through the channels

        @Test func aMemoryWarningReachesTheProcessThroughSystemdsProtocolAndThroughASignal() async throws {
            let directory = try TemporaryDirectory()
            let fifoOutput = directory.path.appending("fifo").string
            let signalOutput = directory.path.appending("signal").string
            let source = ScriptedSampleSource(residentBytes: 0)
            let system = try Self.system(warningAt: source)
            // A watcher as MEMORY_PRESSURE.md describes one: it opens the FIFO and reads a warning.
            let watcher = try system.register(
                .test("watcher"),
                process: .shell("test -p \"$MEMORY_PRESSURE_WATCH\" && head -c 1 \"$MEMORY_PRESSURE_WATCH\" > /dev/null && echo warned > \(fifoOutput); sleep 30"),
                configuration: Self.configuration, options: ProcessAppOptions(channel: .systemd)
            )
            let handler = try system.register(
                .test("handler"),
                process: .shell("trap 'echo warned > \(signalOutput)' USR1; while :; do sleep 0.05; done"),
                configuration: Self.configuration, options: ProcessAppOptions(channel: .signal(SIGUSR1))
            )
            try await watcher.launch()
            try await handler.launch()
            let budget = system.budget
            try await system.running {
                source.set(residentBytes: budget.bytes(enteringAbove: .warning) + 1, stall: nil)
                #expect(await eventually { (try? KernelFile.read(FilePath(fifoOutput)))?.contains("warned") == true })
                #expect(await eventually { (try? KernelFile.read(FilePath(signalOutput)))?.contains("warned") == true })
                source.set(residentBytes: 0, stall: nil)
            }
            await system.shutDown()
        }

        @Test func aSwiftChildHearsEveryCallbackInOrderThroughTheClientAndAnswersEach() async throws {
            let directory = try TemporaryDirectory()
            let source = ScriptedSampleSource(residentBytes: 0)
            let system = try Self.system(warningAt: source)
            let (app, log) = try Self.registerClientFixture(
                "client", in: system, logIn: directory, environment: ["CLIENT_FIXTURE_BALLAST_BYTES": "\(32 * mebibyte)"]
            )
            #expect(try await app.launch() == .active)
            #expect(try ClientChannelTests.lines(log) == ["willFinishLaunching", "didFinishLaunching", "didBecomeActive"])
            #expect(try await app.enterBackground() == .suspended)
            #expect(try await app.enterForeground() == .active)
            #expect(try ClientChannelTests.lines(log).suffix(4) == ["willResignActive", "didEnterBackground", "willEnterForeground", "didBecomeActive"])

            // A warning reaches the child, which frees half its ballast and answers.
            let before = system.footprint(of: app.identifier).processBytes
            #expect(before >= 32 * mebibyte)
            let budget = system.budget
            try await system.running {
                source.set(residentBytes: budget.bytes(enteringAbove: .warning) + 1, stall: nil)
                #expect(await eventually { (try? ClientChannelTests.lines(log))?.contains("ballast \(16 * mebibyte)") == true })
                source.set(residentBytes: 0, stall: nil)
            }
            #expect(try ClientChannelTests.lines(log).contains { $0.hasPrefix("didReceiveMemoryWarning ") })
            #expect(await eventually { system.footprint(of: app.identifier).processBytes <= before - 12 * mebibyte }, "the freed memory is gone from its footprint")

            // willTerminate is answered, and the child then exits by itself.
            #expect(try await app.terminate(reason: .explicit) == .notRunning)
            #expect(try ClientChannelTests.lines(log).last == "willTerminate")
            let exit = try #require(await eventuallyRecord(of: app.identifier, in: system)).processExit
            // It exits by itself once it has answered; on a loaded machine the SIGTERM may come first.
            #expect(exit == .exited(status: 0) || exit == .signaled(signal: SIGTERM, coreDumped: false, bySystem: false, byKernelOOMKiller: false),
                    "\(String(describing: exit))")
        }

        @Test func aClientChildThatDoesNotAnswerOverrunsItsDeadlineAndIsTerminated() async throws {
            let system = try Self.system()
            // A child given the channel that never reads it: its launch callbacks are never answered.
            let app = try system.register(
                .test("silent"), process: .shell("sleep 30"),
                configuration: try AppConfiguration(launchDeadline: .milliseconds(500)),
                options: ProcessAppOptions(channel: .client)
            )
            let start = ContinuousClock.now
            _ = try await app.launch()
            #expect(ContinuousClock.now - start >= .milliseconds(250), "it had until its launch deadline")
            #expect(app.state == .notRunning)
            #expect(app.terminationReason == .launchDeadline, "an unanswered launch is the iOS watchdog's launch timeout")
        }

        /// A child that stalls past its deadline in `didEnterBackground`, or in `willTerminate`: its
        /// app ends with `deadline` every time, and its process is killed, never suspended
        /// mid-callback. The deadline's timer and the wait for the child's answer end at the same
        /// instant; whichever comes first decides the same. Two hundred trials, twenty children at
        /// a time.
        @Test(arguments: ["didEnterBackground", "willTerminate"])
        func aChildStalledPastItsDeadlineEndsWithDeadlineEveryTime(stalledIn callback: String) async throws {
            let fixture = try #require(ClientChannelTests.fixture, "client-fixture is built beside the test bundle")
            let system = try Self.system()
            var environment = ClientChannelTests.sanitizerEnvironment
            environment["CLIENT_FIXTURE_STALL"] = callback
            // The launch is not the subject: twenty children starting at once under a sanitizer
            // take seconds to answer it.
            let configuration = try AppConfiguration(
                launchDeadline: .seconds(120), backgroundDeadline: .milliseconds(100), terminationDeadline: .milliseconds(100),
                backgroundTaskTimeLimit: .seconds(30)
            )
            let apps = try (0..<20).map { number in
                try system.register(
                    .test("stalled-\(number)"), process: ProcessSpecification(executable: fixture, environment: environment),
                    configuration: configuration, options: ProcessAppOptions(channel: .client)
                )
            }
            var failures: [String] = []
            var children: [pid_t] = []
            for _ in 0..<10 {
                await withTaskGroup(of: (failure: String?, pid: pid_t?).self) { group in
                    for app in apps {
                        group.addTask {
                            do {
                                let launched = try await app.launch()
                                let pid = system.process(of: app.identifier)?.pid
                                guard launched == .active else { return ("\(app.identifier) launched to \(launched)", pid) }
                                let ended = callback == "didEnterBackground"
                                    ? try await app.enterBackground() : try await app.terminate(reason: .explicit)
                                let reason = app.terminationReason
                                guard ended == .notRunning, reason == .deadline else {
                                    return ("\(app.identifier) ended \(ended), reason \(reason.map { "\($0)" } ?? "none")", pid)
                                }
                                return (nil, pid)
                            } catch {
                                return ("\(app.identifier): \(error)", nil)
                            }
                        }
                    }
                    for await outcome in group {
                        if let failure = outcome.failure { failures.append(failure) }
                        if let pid = outcome.pid { children.append(pid) }
                    }
                }
                // A trial that failed leaves its app running: the next round could not launch it.
                guard failures.isEmpty else { break }
            }
            #expect(failures == [])
            #expect(children.count == 200)
            // Every stalled child was killed, none left frozen.
            #expect(await eventually { !children.contains(where: HostEndTests.isAlive) })
            await system.shutDown()
        }

        @Test func aSimulatedWarningReachesAChildOnItsChannelAsTheLaddersDoes() async throws {
            let directory = try TemporaryDirectory()
            let system = try Self.system()
            let (app, log) = try Self.registerClientFixture("client", in: system, logIn: directory)
            #expect(try await app.launch() == .active)
            let delivery = try await system.simulateMemoryWarning(level: .critical)
            #expect(delivery.appsReached == 1)
            #expect(delivery.appsTimedOut.isEmpty)
            // The child answered before the delivery ended: its line is written.
            #expect(try ClientChannelTests.lines(log).last == "ballast 0")
            #expect(try ClientChannelTests.lines(log).contains("didReceiveMemoryWarning critical"))
            await system.shutDown()
        }

        /// A Swift child saves its position on entering the background, is terminated for pressure
        /// while suspended, and resumes from its position at its next launch, told why and how its
        /// previous instance ended.
        @Test func aChildResumesFromTheStateItSavedAfterThePressureEndedIt() async throws {
            let directory = try TemporaryDirectory()
            let archive = try TemporaryDirectory()
            let source = ScriptedSampleSource(residentBytes: 0)
            let system = try Self.system(warningAt: source, archive: archive)
            let (app, log) = try Self.registerClientFixture("worker", in: system, logIn: directory, environment: ["CLIENT_FIXTURE_SAVE_STATE": "1"])
            #expect(try await app.launch() == .active)
            #expect(try ClientChannelTests.lines(log).contains("options user previous - status - signal - restored -"))
            #expect(try await app.enterBackground() == .suspended)
            #expect(try ClientChannelTests.lines(log).last == "saved position 1", "saved before its callback was over")

            let budget = system.budget
            try await system.running {
                source.set(residentBytes: budget.bytes(enteringAbove: .critical) + 1, stall: nil)
                #expect(await eventually { app.state == .notRunning })
                source.set(residentBytes: 0, stall: nil)
            }
            #expect(app.terminationReason == .systemPressure)

            #expect(try await app.launch() == .active)
            #expect(app.launchOptions.restoredState == Array("position 1".utf8), "the host restores what the child saved, byte for byte")
            #expect(try ClientChannelTests.lines(log).contains("options user previous systemPressure status - signal 9 restored position 1"))
            #expect(try await app.enterBackground() == .suspended)
            #expect(try ClientChannelTests.lines(log).last == "saved position 2")
            await system.shutDown()
        }

        /// A child of protocol 1, built before the launch options and saved state, still runs every
        /// callback: the options it does not know are answered without its code.
        @Test func aChildOfTheFirstProtocolStillRuns() async throws {
            let directory = try TemporaryDirectory()
            let system = try Self.system()
            let (app, log) = try Self.registerClientFixture("old", in: system, logIn: directory, environment: ["CLIENT_FIXTURE_PROTOCOL": "1"])
            #expect(try await app.launch() == .active)
            #expect(try await app.enterBackground() == .suspended)
            #expect(try await app.enterForeground() == .active)
            #expect(try await system.simulateMemoryWarning().appsTimedOut.isEmpty)
            #expect(try await app.terminate(reason: .explicit) == .notRunning)
            #expect(try ClientChannelTests.lines(log) == [
                "willFinishLaunching", "didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground",
                "willEnterForeground", "didBecomeActive", "didReceiveMemoryWarning", "willTerminate",
            ])
            #expect(app.terminationReason == .explicit)
            await system.shutDown()
        }

        @Test func aProtectedProcessAppsOOMScoreIsTheLowestInEveryState() async throws {
            let system = try Self.system()
            let app = try system.register(
                .test("guarded"), process: .shell("exec sleep 30"), configuration: try AppConfiguration(isProtected: true)
            )
            // -1000 where this process may lower a child's score (CAP_SYS_RESOURCE); else this
            // process's own, the lowest a child may have.
            let probe = try ChildProcess.spawn(.shell("exec sleep 30"))
            let lowest = (try? probe.setOOMScoreAdjustment(-1000)) != nil ? -1000 : try KernelFile.parse(FilePath("/proc/self/oom_score_adj")) { Int($0) }
            probe.kill()
            #expect(try await app.launch() == .active)
            let pid = try #require(system.process(of: app.identifier)).pid
            #expect(try oomScoreAdjustment(pid) == lowest)
            #expect(try await app.enterBackground() == .suspended)
            #expect(try oomScoreAdjustment(pid) == lowest, "never the kernel's choice, as OOMScoreAdjust=-1000")
            #expect(lowest < AppImportance.foreground.oomScoreAdjustmentOfASuspendedApp)
            await system.shutDown()
        }

        /// A child launched into the background runs for its launch grace, then is frozen; with
        /// no grace it is frozen at once.
        @Test func aBackgroundLaunchRunsForItsGraceBeforeItIsFrozen() async throws {
            let clock = ManualClock()
            let system = try Self.system(clock: clock)
            let directory = try TemporaryDirectory()
            let started = directory.path.appending("started").string
            let graced = try system.register(
                .test("graced"), process: .shell("echo started > \(started); exec sleep 30"), configuration: Self.configuration,
                options: ProcessAppOptions(launchGrace: .seconds(10))
            )
            let background = LaunchOptions(reason: .backgroundEvent("index"))
            #expect(try await graced.launch(options: background) == .background, "held in the background for its grace")
            #expect(await eventually { access(started, F_OK) == 0 }, "it runs meanwhile")
            #expect(system.process(of: graced.identifier)?.isFrozen == false)
            clock.step(by: .seconds(9))
            #expect(await system.deadlinesHaveLookedAtTheTimeNow())
            #expect(graced.state == .background)
            clock.step(by: .seconds(1))
            #expect(await eventually { graced.state == .suspended && system.process(of: graced.identifier)?.isFrozen == true })

            let ungraced = try system.register(
                .test("ungraced"), process: .shell("exec sleep 30"), configuration: Self.configuration, options: ProcessAppOptions(launchGrace: .zero)
            )
            #expect(try await ungraced.launch(options: background) == .suspended)
            await system.shutDown()
        }

        @Test(arguments: [Duration.milliseconds(-1), .seconds(601)])
        func aLaunchGraceOutOfRangeIsRefusedAtRegistration(_ grace: Duration) throws {
            let system = try Self.system()
            let error = #expect(throws: MemoryPressureError.self) {
                try system.register(.test("graced"), process: .shell("exit 0"), options: ProcessAppOptions(launchGrace: grace))
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.description.contains("expected 0.0 seconds to 600.0 seconds") == true, "\(String(describing: error))")
            #expect(system.app(.test("graced")) == nil)
        }

        /// A fleet of process apps and an in-process app, against the real kernel: the two largest
        /// suspended children are enough, and exactly those two are terminated; the in-process app
        /// is left alone.
        @Test func aMixedFleetLosesExactlyTheTwoAppsItNeedsTo() async throws {
            let source = ScriptedSampleSource(residentBytes: 0)
            let system = try Self.system(warningAt: source)
            let directory = try TemporaryDirectory()
            var children: [App] = []
            for (name, mebibytes) in [("large", 40), ("middle", 30)] {
                let filled = directory.path.appending(name).string
                let app = try system.register(
                    .test(name), process: .shell("x=$(head -c \(mebibytes << 20) /dev/zero | tr '\\0' a); touch \(filled); while :; do sleep 1; done"),
                    configuration: Self.configuration
                )
                try await app.launch()
                #expect(await eventually { access(filled, F_OK) == 0 }, "\(name) holds its memory")
                children.append(app)
            }
            let registry = system.registry
            let journal = TestAppJournal()
            let small = try system.register(.test("small"), configuration: Self.configuration) {
                ballastDelegate(4, registry: registry, journal: journal)
            }
            try await small.launch()
            for app in children + [small] {
                #expect(try await app.enterBackground() == .suspended)
            }
            let large = system.footprint(of: children[0].identifier).totalBytes
            let middle = system.footprint(of: children[1].identifier).totalBytes
            try #require(large > middle && middle > system.footprint(of: small.identifier).totalBytes, "largest first: large \(large), middle \(middle), small \(system.footprint(of: small.identifier).totalBytes)")
            // The host's scripted share: with both children, over critical; without the large one,
            // still over the target; without both, under it.
            let target = system.targetBytes
            let resident = target - middle / 2
            try #require(resident + large + middle >= system.budget.bytes(enteringAbove: .critical))
            try await system.running {
                source.set(residentBytes: resident, stall: nil)
                #expect(await eventually { children.allSatisfy { $0.state == .notRunning } })
                // The ladder done with a later sample: nothing more is terminated.
                #expect(await system.ladderHasHandledASampleAtTheTimeNow())
            }
            #expect(system.terminations.map(\.app.rawValue) == ["large", "middle"])
            #expect(small.state == .suspended, "the in-process app was not needed")
            #expect(system.terminations.allSatisfy { ($0.decision?.footprintBytes ?? 0) > target })
            await system.shutDown()
        }

        // MARK: Bad input

        @Test func aBadProcessIsAClearErrorAtRegistrationAndLeavesNothingBehind() throws {
            let directory = try TemporaryDirectory()
            let plainFile = directory.path.appending("plain").string
            let descriptor = open(plainFile, O_CREAT | O_WRONLY, 0o644)
            #expect(descriptor >= 0)
            close(descriptor)
            let system = try Self.system()
            for (name, process) in [
                ("missing", ProcessSpecification(executable: "/nonexistent/mempressure-test")),
                ("notExecutable", ProcessSpecification(executable: plainFile)),
                ("directory", ProcessSpecification(executable: directory.path.string)),
                ("notFound", ProcessSpecification(executable: "no-such-program-mempressure")),
            ] {
                #expect(throws: MemoryPressureError.self) {
                    try system.register(.test(name), process: process)
                }
                #expect(system.app(.test(name)) == nil, "\(name) is not registered")
                // The name stays free for a good registration.
                #expect(throws: Never.self) { try system.register(.test(name), process: .shell("exit 0")) }
            }
            for signal in [0, SIGKILL, SIGSTOP, SIGCONT, 65] {
                let error = #expect(throws: MemoryPressureError.self) {
                    try system.register(.test("signal\(signal)"), process: .shell("exit 0"), options: ProcessAppOptions(channel: .signal(signal)))
                }
                #expect(error?.code == .invalidArgument)
            }
            _ = try system.register(.test("twice"), process: .shell("exit 0"))
            let duplicate = #expect(throws: MemoryPressureError.self) { try system.register(.test("twice"), process: .shell("exit 0")) }
            #expect(duplicate?.code == .duplicateApp)
            #expect(throws: MemoryPressureError.self) { try system.register(.service, process: .shell("exit 0")) }
        }

        @Test func aProgramGoneBeforeTheLaunchEndsTheLaunchWithoutAHang() async throws {
            let directory = try TemporaryDirectory()
            let program = directory.path.appending("program").string
            let descriptor = open(program, O_CREAT | O_WRONLY, 0o755)
            #expect(descriptor >= 0)
            _ = "#!/bin/sh\nsleep 30\n".withCString { write(descriptor, $0, strlen($0)) }
            close(descriptor)
            let system = try Self.system()
            let app = try system.register(.test("vanishing"), process: ProcessSpecification(executable: program), configuration: Self.configuration)
            unlink(program)
            #expect(try await app.launch() == .notRunning)
            #expect(app.terminationReason == .processExited)
            #expect(system.process(of: app.identifier) == nil)
        }

        @Test func aSystemLetGoKillsItsProcesses() async throws {
            let pid = try await Self.launchedAndLetGo()
            #expect(await eventually(within: .seconds(10)) { !isAlive(pid) }, "no child outlives the system and the app that ran it")
        }

        /// Launches a process app that would run for 30 s, lets go of its system and its app, and
        /// returns its pid.
        private static func launchedAndLetGo() async throws -> Int32 {
            let system = try Self.system()
            let app = try system.register(.test("orphan"), process: .shell("sleep 30"), configuration: Self.configuration)
            try await app.launch()
            return try #require(system.process(of: app.identifier)).pid
        }

        @Test func aProcessThatExitsAtOnceEndsItsLaunchWithoutAHang() async throws {
            let system = try Self.system()
            let app = try system.register(.test("brief"), process: .shell("exit 7"), configuration: Self.configuration)
            _ = try await app.launch()
            #expect(await eventually { app.state == .notRunning })
            #expect(app.terminationReason == .processExited)
            #expect(try #require(await eventuallyRecord(of: app.identifier, in: system)).processExit == .exited(status: 7))
        }
    }
}

// MARK: Reading the kernel

/// The process's user and system CPU time, in clock ticks (`/proc/PID/stat` fields 14 and 15).
private func cpuTicks(_ pid: Int32) throws -> Int {
    let stat = try KernelFile.read(FilePath("/proc/\(pid)/stat"))
    let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
    // Field 3 (the state) is the first after the name.
    return Int(fields[11])! + Int(fields[12])!
}

private func oomScoreAdjustment(_ pid: Int32) throws -> Int {
    Int(try KernelFile.read(FilePath("/proc/\(pid)/oom_score_adj")).split(whereSeparator: \.isWhitespace).first ?? "")!
}

/// Whether `pid` is alive and not a zombie.
private func isAlive(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0, let stat = try? KernelFile.read(FilePath("/proc/\(pid)/stat")), let close = stat.lastIndex(of: ")") else {
        return false
    }
    return stat[stat.index(close, offsetBy: 2)] != "Z"
}

private func eventuallyRecord(of app: AppIdentifier, in system: MemorySystem) async -> TerminationRecord? {
    guard await eventually({ system.terminations.contains { $0.app == app } }) else { return nil }
    return system.terminations.last { $0.app == app }
}

extension AppImportance {
    /// The `oom_score_adj` of a suspended app of this band.
    var oomScoreAdjustmentOfASuspendedApp: Int { oomScoreAdjustment(in: .suspended) }
}
