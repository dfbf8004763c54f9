#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// Importance bands: the values themselves, and the ladder's order at critical, least important
/// band first, suspended before background within a band, largest first within those.
@Suite struct AppImportanceTests {
    @Test func bandsAreOrderedFromCachedToForeground() {
        #expect(AppImportance.allCases == [.cached, .service, .perceptible, .foreground])
        #expect(AppImportance.allCases.sorted() == AppImportance.allCases)
        #expect(AppImportance.allCases.shuffled().sorted() == AppImportance.allCases)
        #expect(AppImportance.cached < .service && AppImportance.service < .perceptible && AppImportance.perceptible < .foreground)
        #expect(!(AppImportance.foreground < .cached))
        #expect(!(AppImportance.service < .service))
        #expect(AppImportance.allCases.map(\.description) == ["cached", "service", "perceptible", "foreground"])
    }

    @Test func bandsAreCodableAsTheirNames() throws {
        let encoded = try JSONEncoder().encode(AppImportance.allCases)
        #expect(String(decoding: encoded, as: UTF8.self) == #"["cached","service","perceptible","foreground"]"#)
        let decoded = try JSONDecoder().decode([AppImportance].self, from: Data(#"["foreground","cached","perceptible","service"]"#.utf8))
        #expect(decoded == [.foreground, .cached, .perceptible, .service])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(AppImportance.self, from: Data(#""critical""#.utf8)) }
    }

    @Test func theDefaultConfigurationIsInTheServiceBand() throws {
        #expect(AppConfiguration.default.importance == .service)
        #expect(try AppConfiguration().importance == .service)
        #expect(try AppConfiguration() == .default)
        let perceptible = try AppConfiguration(backgroundTaskTimeLimit: .seconds(60), importance: .perceptible)
        #expect(perceptible.importance == .perceptible)
        #expect(perceptible.backgroundTaskTimeLimit == .seconds(60))
        let service = try AppConfiguration(backgroundTaskTimeLimit: .seconds(60))
        #expect(perceptible != service)
    }

    @Test func oomScoreAdjustmentFollowsTheLaddersOrder() throws {
        let expected: [AppImportance: (suspended: Int, background: Int)] = [
            .cached: (900, 800), .service: (700, 600), .perceptible: (500, 400), .foreground: (300, 200),
        ]
        for band in AppImportance.allCases {
            let values = try #require(expected[band])
            #expect(band.oomScoreAdjustment(in: .suspended) == values.suspended, "\(band)")
            #expect(band.oomScoreAdjustment(in: .background) == values.background, "\(band)")
            for state in [AppState.active, .inactive, .notRunning] {
                #expect(band.oomScoreAdjustment(in: state) == 0, "\(band) \(state)")
            }
        }

        // In the ladder's order (least important band first, suspended before background in each)
        // every value is lower than the one before: the kernel's first choice is the ladder's.
        let ladderOrder = AppImportance.allCases.flatMap { band in
            [AppState.suspended, .background].map { band.oomScoreAdjustment(in: $0) }
        }
        #expect(ladderOrder == [900, 800, 700, 600, 500, 400, 300, 200])
        #expect(zip(ladderOrder, ladderOrder.dropFirst()).allSatisfy { $0 > $1 })

        // Less important means a higher value, in either state; every value is one the kernel takes
        // and none falls below a foreground app's.
        for state in [AppState.suspended, .background] {
            for less in AppImportance.allCases {
                for more in AppImportance.allCases where less < more {
                    #expect(less.oomScoreAdjustment(in: state) > more.oomScoreAdjustment(in: state), "\(less) vs \(more), \(state)")
                }
            }
        }
        for band in AppImportance.allCases {
            for state in AppState.allCases {
                #expect((0...1000).contains(band.oomScoreAdjustment(in: state)))
            }
        }
    }
}

/// The ladder at critical, with apps of several bands, driven by a scripted footprint.
@Suite(.exclusiveMemoryUse)
struct ImportanceBandTests {
    let journal = TestAppJournal()

    /// Where an app is put before the system runs.
    enum Placement {
        case active, background, suspended
    }

    /// A system judged on `source` alone, with a target of 64 MiB.
    static func system() throws -> (MemorySystem, ScriptedSampleSource) {
        let source = ScriptedSampleSource(residentBytes: 0)
        var configuration = try MemorySystem.Configuration.test(targetBytes: 64 * mebibyte, logger: silentLogger)
        configuration.monitor.sources = [source]
        return (try MemorySystem(configuration: configuration), source)
    }

    /// Registers an app of `mebibytes` of ballast in `band`, launches it and puts it at `placement`:
    /// a background app holds a background task open, so it stays in the background.
    func add(
        _ name: String, _ band: AppImportance, _ placement: Placement, mebibytes: Int, to system: MemorySystem
    ) async throws -> App {
        let configuration = AppConfiguration.patient(importance: band)
        let registry = system.registry
        let journal = journal
        let app = try system.register(.test(name), configuration: configuration) {
            ballastDelegate(mebibytes, registry: registry, journal: journal)
        }
        try await app.launch()
        switch placement {
        case .active:
            break
        case .background:
            _ = try app.beginBackgroundTask { _ in }
            try await app.enterBackground()
        case .suspended:
            try await app.enterBackground()
        }
        let expected: AppState = switch placement {
        case .active: .active
        case .background: .background
        case .suspended: .suspended
        }
        try #require(app.state == expected, "\(name)")
        try #require(system.footprint(of: app.identifier).totalBytes == mebibytes * mebibyte, "\(name)")
        return app
    }

    /// Raises the scripted footprint above the critical threshold, and above the target by more
    /// than every app holds, and returns the first ladder run at critical: even with all they
    /// return counted gone, that run terminates every app it may.
    static func firstCriticalRun(of system: MemorySystem, source: ScriptedSampleSource) async throws -> LadderRun {
        let events = system.events.stream()
        let held = system.apps.reduce(0) { $0 + system.footprint(of: $1.identifier).totalBytes }
        let footprint = max(system.budget.bytes(enteringAbove: .critical), system.targetBytes + held) + mebibyte
        let event = try await system.running {
            source.set(residentBytes: footprint, stall: nil)
            return await events.first { event in
                if case .ladderRun(let run) = event { run.level == .critical } else { false }
            }
        }
        let run: LadderRun? = if case .ladderRun(let run) = event { run } else { nil }
        return try #require(run, "no ladder run at critical")
    }

    /// The termination steps of `run`, each as its step and the apps it terminated.
    static func terminationSteps(of run: LadderRun) -> [Step] {
        run.steps
            .filter { $0.step == .terminateSuspended || $0.step == .terminateBackground }
            .map { Step($0.step, $0.terminated.map(\.rawValue)) }
    }

    /// A termination step, comparable in a test.
    struct Step: Equatable, CustomStringConvertible {
        let step: ReclamationStep
        let apps: [String]

        init(_ step: ReclamationStep, _ apps: [String]) {
            self.step = step
            self.apps = apps
        }

        var description: String { "\(step) \(apps)" }
    }

    @Test func aBackgroundCachedAppIsTerminatedBeforeALargerSuspendedServiceApp() async throws {
        let (system, source) = try Self.system()
        let service = try await add("service-suspended", .service, .suspended, mebibytes: 6, to: system)
        let cached = try await add("cached-background", .cached, .background, mebibytes: 2, to: system)
        let active = try await add("active", .service, .active, mebibytes: 1, to: system)
        // One termination is enough: once an app is terminated the footprint falls under target,
        // before the ladder measures again.
        let lowering = system.lifecycleEvents.observe { event in
            if case .terminated = event { source.set(residentBytes: 0, stall: nil) }
        }
        let run = try await Self.firstCriticalRun(of: system, source: source)
        withExtendedLifetime(lowering) {}

        let terminations = system.terminations
        #expect(terminations.map(\.app) == [cached.identifier])
        #expect(terminations.map(\.state) == [.background])
        #expect(terminations.map(\.step) == [.terminateBackground])
        #expect(terminations.map(\.reason) == [.systemPressure])
        #expect(Self.terminationSteps(of: run) == [Step(.terminateBackground, ["cached-background"])])
        #expect(run.latency != nil, "the run ended under target")
        #expect(service.state == .suspended)
        #expect(active.state == .active)
    }

    @Test func bandsGoLeastImportantFirstSuspendedBeforeBackgroundLargestFirst() async throws {
        let (system, source) = try Self.system()
        // Registered in no helpful order; the active app is the largest and the least important.
        let active = try await add("active-cached", .cached, .active, mebibytes: 9, to: system)
        for (name, band, placement, mebibytes) in [
            ("foreground-s8", AppImportance.foreground, Placement.suspended, 8),
            ("service-b3", .service, .background, 3),
            ("cached-b1", .cached, .background, 1),
            ("perceptible-b7", .perceptible, .background, 7),
            ("cached-s2", .cached, .suspended, 2),
            ("service-s6", .service, .suspended, 6),
            ("cached-b5", .cached, .background, 5),
            ("cached-s4", .cached, .suspended, 4),
        ] {
            _ = try await add(name, band, placement, mebibytes: mebibytes, to: system)
        }
        let run = try await Self.firstCriticalRun(of: system, source: source)

        let order = ["cached-s4", "cached-s2", "cached-b5", "cached-b1", "service-s6", "service-b3", "perceptible-b7", "foreground-s8"]
        #expect(system.terminations.map(\.app.rawValue) == order)
        #expect(system.terminations.map(\.footprintBytes) == [4, 2, 5, 1, 6, 3, 7, 8].map { $0 * mebibyte })
        #expect(system.terminations.allSatisfy { $0.reason == .systemPressure })
        #expect(system.terminations.map(\.step) == system.terminations.map { $0.state == .suspended ? .terminateSuspended : .terminateBackground })
        // One step per band and state that terminated something, in the order they ran.
        #expect(Self.terminationSteps(of: run) == [
            Step(.terminateSuspended, ["cached-s4", "cached-s2"]),
            Step(.terminateBackground, ["cached-b5", "cached-b1"]),
            Step(.terminateSuspended, ["service-s6"]),
            Step(.terminateBackground, ["service-b3"]),
            Step(.terminateBackground, ["perceptible-b7"]),
            Step(.terminateSuspended, ["foreground-s8"]),
        ])
        #expect(run.latency == nil, "the footprint stayed above target, so the ladder went through every band")
        #expect(active.state == .active)
    }

    @Test func inOneBandTheOrderAndTheStepsAreAsBeforeBands() async throws {
        let (system, source) = try Self.system()
        let active = try await add("active", .perceptible, .active, mebibytes: 1, to: system)
        for (name, placement, mebibytes) in [
            ("background-2", Placement.background, 2), ("suspended-1", .suspended, 1), ("background-5", .background, 5),
            ("suspended-3", .suspended, 3), ("suspended-6", .suspended, 6), ("background-4", .background, 4),
        ] {
            _ = try await add(name, .perceptible, placement, mebibytes: mebibytes, to: system)
        }
        let run = try await Self.firstCriticalRun(of: system, source: source)

        // Every suspended app, largest first, then every background app, largest first: one step each.
        let suspended = ["suspended-6", "suspended-3", "suspended-1"]
        let background = ["background-5", "background-4", "background-2"]
        #expect(system.terminations.map(\.app.rawValue) == suspended + background)
        #expect(Self.terminationSteps(of: run) == [Step(.terminateSuspended, suspended), Step(.terminateBackground, background)])
        #expect(run.steps.map(\.step) == [.purge, .warning, .terminateSuspended, .terminateBackground])
        #expect(active.state == .active)
    }

    @Test func theActiveAppIsNeverTerminatedForPressureEvenWhenCached() async throws {
        let (system, source) = try Self.system()
        let active = try await add("active-cached", .cached, .active, mebibytes: 8, to: system)
        let suspended = try await add("suspended-foreground", .foreground, .suspended, mebibytes: 1, to: system)
        let background = try await add("background-foreground", .foreground, .background, mebibytes: 2, to: system)
        let run = try await Self.firstCriticalRun(of: system, source: source)

        // The ladder ran out of apps it may terminate, still above target, and left the active
        // app alone, though it is the least important and the largest.
        #expect(run.latency == nil)
        #expect(system.terminations.map(\.app) == [suspended.identifier, background.identifier])
        #expect(Self.terminationSteps(of: run).flatMap(\.apps).contains(active.identifier.rawValue) == false)
        #expect(active.state == .active)
        #expect(system.footprint(of: active.identifier).totalBytes == 8 * mebibyte)
    }
}
