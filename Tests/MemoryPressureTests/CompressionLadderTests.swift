import Logging
import Synchronization
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// The ladder's compression step, judged through a fake kernel: a zram swap device that is on or
/// not, and a page-out that gives back a set share of the app's footprint (the scripted footprint
/// falls by it). `CompressionKernelTests` does the same against the real kernel.
@Suite(.exclusiveMemoryUse)
struct CompressionLadderTests {
    let journal = TestAppJournal()

    /// The fake kernel: the footprint a sample reads, and the apps paged out, in order.
    final class FakeKernel: Sendable {
        let source = ScriptedSampleSource(residentBytes: 0)
        private let state = Mutex<(footprint: Int, pagedOut: [String], sizes: [String: Int])>((0, [], [:]))
        let swap: SwapSpace
        /// The share of an app's footprint a page-out gives back.
        let share: Double

        init(zram: Bool, share: Double) {
            swap = SwapSpace(devices: [.init(path: zram ? "/dev/zram0" : "/swapfile", sizeBytes: 1 << 30, usedBytes: 0)], zram: [:])
            self.share = share
        }

        var kernel: Compressor.Kernel {
            Compressor.Kernel(readSwap: { [swap] in swap }) { [self] app in
                let footprint = state.withLock { state in
                    state.pagedOut.append(app.rawValue)
                    state.footprint -= Int(Double(state.sizes[app.rawValue] ?? 0) * share)
                    return state.footprint
                }
                source.set(residentBytes: footprint, stall: nil)
                return 1 << 20
            }
        }

        func set(footprint: Int, sizes: [String: Int]) {
            state.withLock { $0 = (footprint, [], sizes) }
            source.set(residentBytes: footprint, stall: nil)
        }

        var pagedOut: [String] { state.withLock { $0.pagedOut } }
    }

    /// A system of three suspended apps whose heaps hold `fractions` of the excess over the target,
    /// at a footprint just over critical; runs `body` with the system running and the footprint set.
    func withThreeSuspendedApps(
        _ fake: FakeKernel, compression: Compression = .automatic, logger: Logger = silentLogger,
        fractions: [(String, Double)], runningInBackground: Set<String> = [], _ body: (MemorySystem, [App]) async throws -> Void
    ) async throws {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 64 * mebibyte, logger: logger)
        configuration.monitor.sources = [fake.source]
        configuration.compression = compression
        configuration.compressionKernel = fake.kernel
        let system = try MemorySystem(configuration: configuration)
        let footprint = system.budget.bytes(enteringAbove: .critical) + mebibyte
        let excess = footprint - system.targetBytes
        let registry = system.registry
        let journal = journal
        var apps: [App] = []
        var sizes: [String: Int] = [:]
        for (name, fraction) in fractions {
            let mebibytes = (Int(Double(excess) * fraction) + mebibyte - 1) / mebibyte
            sizes[AppIdentifier.test(name).rawValue] = mebibytes * mebibyte
            let longTasks = try AppConfiguration(backgroundTaskTimeLimit: .seconds(600))
            let app = try system.register(.test(name), configuration: longTasks) { ballastDelegate(mebibytes, registry: registry, journal: journal) }
            try await app.launch()
            if runningInBackground.contains(name) {
                // A background task keeps it running in the background.
                _ = try app.beginBackgroundTask { _ in }
                #expect(try await app.enterBackground() == .background)
            } else {
                #expect(try await app.enterBackground() == .suspended)
            }
            apps.append(app)
        }
        try await system.running {
            fake.set(footprint: footprint, sizes: sizes)
            try await body(system, apps)
        }
        _ = await system.shutDown()
    }

    static func firstCriticalRun(of system: MemorySystem, _ events: AsyncStream<MemorySystemEvent>) async -> LadderRun? {
        await events.first { event in
            if case .ladderRun(let run) = event { run.level == .critical } else { false }
        }.flatMap { if case .ladderRun(let run) = $0 { run } else { nil } }
    }

    @Test func suspendedAppsAreCompressedLargestFirstAndNoneIsTerminatedWhenThatIsEnough() async throws {
        let fake = FakeKernel(zram: true, share: 0.9)
        try await withThreeSuspendedApps(fake, fractions: [("small", 0.3), ("large", 0.7), ("middle", 0.5)]) { system, apps in
            let events = system.events.stream()
            fake.source.set(residentBytes: nil, stall: nil)
            let run = try #require(await Self.firstCriticalRun(of: system, events))
            #expect(fake.pagedOut == [AppIdentifier.test("large").rawValue, AppIdentifier.test("middle").rawValue])
            #expect(run.steps.map(\.step).contains(.compressSuspended))
            #expect(!run.steps.map(\.step).contains(.terminateSuspended))
            #expect(run.footprintAfterBytes.map { $0 <= system.targetBytes } == true)
            #expect(system.terminations.isEmpty)
            #expect(apps.allSatisfy { $0.state == .suspended }, "no app is terminated, and none is told")
        }
    }

    @Test func backgroundAppsAreCompressedOnceNoSuspendedAppIsLeftAndBeforeAnyTermination() async throws {
        let fake = FakeKernel(zram: true, share: 0.9)
        try await withThreeSuspendedApps(
            fake, fractions: [("worker", 0.7), ("frozen", 0.4)], runningInBackground: ["worker"]
        ) { system, apps in
            let events = system.events.stream()
            let run = try #require(await Self.firstCriticalRun(of: system, events))
            // The suspended app first, though smaller; then the running one.
            #expect(fake.pagedOut == [AppIdentifier.test("frozen").rawValue, AppIdentifier.test("worker").rawValue])
            #expect(run.steps.map(\.step).filter { $0 != .purge && $0 != .warning } == [.compressSuspended, .compressBackground])
            #expect(system.terminations.isEmpty)
            #expect(apps.map(\.state) == [.background, .suspended])
        }
    }

    @Test func terminationsBeginOnlyWhenCompressionIsNotEnough() async throws {
        let fake = FakeKernel(zram: true, share: 0.1)
        try await withThreeSuspendedApps(fake, fractions: [("a", 0.6), ("b", 0.5), ("c", 0.4)]) { system, _ in
            let events = system.events.stream()
            let run = try #require(await Self.firstCriticalRun(of: system, events))
            #expect(Set(fake.pagedOut) == Set(["a", "b", "c"].map { AppIdentifier.test($0).rawValue }), "every suspended app first")
            let steps = run.steps.map(\.step)
            let compression = try #require(steps.firstIndex(of: .compressSuspended))
            let termination = try #require(steps.firstIndex(of: .terminateSuspended))
            #expect(compression < termination)
            #expect(run.steps[termination].terminated.first == .test("a"), "then the largest is terminated")
        }
    }

    @Test(arguments: [(true, Compression.off), (false, Compression.automatic)])
    func withCompressionOffOrNoZramTheLadderTerminatesAsBeforeAndSaysWhyOnce(zram: Bool, compression: Compression) async throws {
        let fake = FakeKernel(zram: zram, share: 0.9)
        let (logger, messages) = recordingLogger()
        try await withThreeSuspendedApps(fake, compression: compression, logger: logger, fractions: [("a", 0.6), ("b", 0.5)]) { system, _ in
            let events = system.events.stream()
            let run = try #require(await Self.firstCriticalRun(of: system, events))
            #expect(fake.pagedOut.isEmpty)
            #expect(!run.steps.map(\.step).contains(.compressSuspended))
            #expect(run.steps.first { $0.step == .terminateSuspended }?.terminated == [.test("a"), .test("b")])
        }
        let said = messages.messages(atLeast: .notice).filter { $0.hasPrefix("compression of suspended apps is off: ") }
        #expect(said.count == 1, "\(said)")
        #expect(said.first?.contains(zram ? "the configuration turns it off" : "/swapfile only, not on zram") == true, "\(said)")
    }

    /// A compressor on `fake`'s kernel, which finds compression on, and an app of its own system
    /// named `name`, for the compressor's own tests.
    static func compressorAndApp(named name: String, on fake: FakeKernel) throws -> (Compressor, App) {
        let processes = ProcessApps(warningTimeout: .seconds(1), logger: silentLogger) { _, _ in }
        let compressor = Compressor(setting: .automatic, processes: processes, registry: PurgeRegistry(), logger: silentLogger, kernel: fake.kernel)
        #expect(compressor.refresh(reporting: false))
        let app = try MemorySystem(configuration: .test(targetBytes: 64 * mebibyte, logger: silentLogger)).register(.test(name)) { IdleDelegate() }
        return (compressor, app)
    }

    @Test func aCompressedAppIsNotPagedOutAgainUntilItWasBackInTheForeground() throws {
        let fake = FakeKernel(zram: true, share: 0.5)
        let (compressor, app) = try Self.compressorAndApp(named: "one", on: fake)
        #expect(compressor.compress(app) != nil)
        #expect(compressor.isCompressed(app.identifier))
        #expect(compressor.compress(app) == nil, "once per stay in the background")
        compressor.moved(app.identifier, to: AppState.background)
        #expect(compressor.isCompressed(app.identifier), "a stay in the background and suspended is one stay")
        compressor.moved(app.identifier, to: AppState.active)
        #expect(!compressor.isCompressed(app.identifier))
        #expect(compressor.compress(app) != nil)
        #expect(fake.pagedOut.count == 2)
    }

    /// A background app that keeps running pages back in what it touches: once its footprint has
    /// grown back by `regrowthBytes` over the figure noted after its compression, it may be
    /// compressed again in the same stay, and not before (nor before that figure is noted).
    @Test func aRunningAppIsCompressedAgainOnceItHasGrownBackAndNotBefore() throws {
        let fake = FakeKernel(zram: true, share: 0.5)
        let (compressor, app) = try Self.compressorAndApp(named: "worker", on: fake)
        let regrowth = Compressor.regrowthBytes
        #expect(compressor.compress(app, footprintBytes: 300 * mebibyte) != nil)
        #expect(!compressor.mayCompress(app.identifier, footprintBytes: 1 << 40), "not again before its figure after is noted")
        #expect(compressor.compress(app, footprintBytes: 1 << 40) == nil)
        compressor.noteCompressed(app.identifier, footprintBytes: 20 * mebibyte)
        #expect(!compressor.mayCompress(app.identifier, footprintBytes: 20 * mebibyte + regrowth - 1))
        #expect(compressor.compress(app, footprintBytes: 20 * mebibyte + regrowth - 1) == nil)
        #expect(compressor.compress(app) == nil, "without a figure, once per stay")
        #expect(compressor.mayCompress(app.identifier, footprintBytes: 20 * mebibyte + regrowth))
        #expect(compressor.compress(app, footprintBytes: 20 * mebibyte + regrowth) != nil)
        #expect(fake.pagedOut == [app.identifier.rawValue, app.identifier.rawValue])
    }
}
