@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// Protected apps (`AppConfiguration.isProtected`): never terminated for system pressure, whatever
/// their state, band or size; the ladder terminates the others, and says once when the protected
/// alone hold more than the target.
@Suite(.exclusiveMemoryUse)
struct ProtectedAppTests {
    let journal = TestAppJournal()

    @Test func theLadderTerminatesEveryOtherAppAndNoProtectedOne() async throws {
        let source = ScriptedSampleSource(residentBytes: 0)
        let (logger, messages) = recordingLogger()
        var configuration = try MemorySystem.Configuration.test(targetBytes: 8 * mebibyte, logger: logger)
        configuration.monitor.sources = [source]
        let system = try MemorySystem(configuration: configuration)
        let registry = system.registry
        let journal = journal
        var apps: [String: App] = [:]
        // The protected apps are the largest, and one is of the least important band.
        for (name, mebibytes, band, isProtected) in [
            ("guarded-cached", 12, AppImportance.cached, true), ("guarded", 10, .service, true),
            ("plain-cached", 2, .cached, false), ("plain", 3, .service, false),
        ] {
            let appConfiguration = try AppConfiguration(importance: band, isProtected: isProtected)
            let app = try system.register(.test(name), configuration: appConfiguration) {
                ballastDelegate(mebibytes, registry: registry, journal: journal)
            }
            try await app.launch()
            #expect(try await app.enterBackground() == .suspended)
            apps[name] = app
        }
        let events = system.events.stream()
        // Far above the target, whatever is terminated: every app the ladder may terminate, it does.
        let footprint = system.budget.bytes(enteringAbove: .critical) + 64 * mebibyte
        try await system.running {
            source.set(residentBytes: footprint, stall: nil)
            _ = await events.first { if case .ladderRun(let run) = $0 { run.level == .critical } else { false } }
            // A second run at critical, with nothing left but the protected apps.
            #expect(await system.ladderHasHandledASampleAtTheTimeNow())
        }
        #expect(Set(system.terminations.map(\.app.rawValue)) == ["plain-cached", "plain"])
        #expect(apps["guarded"]?.state == .suspended && apps["guarded-cached"]?.state == .suspended)
        let said = messages.messages(atLeast: .warning).filter { $0.contains("protected apps alone hold more than the target") }
        #expect(said.count == 1, "said once: \(said)")
        _ = await system.shutDown()
    }
}
