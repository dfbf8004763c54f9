#if canImport(Glibc)
import Glibc
#endif
import MemoryPressure
import MemoryPressureTestKit
import Synchronization
import Testing

/// A second round of the public API misused, beyond `PublicAPIMisuseTests`, `MisuseTests` and
/// `ProcessAppMisuseTests`: user code released by the library whose deinitializers use it again,
/// shutdowns asked for from several tasks at once, and the system's waits at the edges of
/// `Duration`. Each ends in the documented behaviour or a typed error; none traps, hangs or returns
/// less than it should.
@Suite struct PublicAPIMisuseRound2Tests {
    static func system() throws -> MemorySystem {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
        configuration.logger = silentLogger
        return try MemorySystem(configuration: configuration)
    }

    /// Runs `body` when the last reference to it goes: what a user's object does in its
    /// deinitializer, captured by a closure the library keeps (a handler, an observer).
    final class ReleaseWitness: Sendable {
        let body: @Sendable () -> Void

        init(_ body: @escaping @Sendable () -> Void) {
            self.body = body
        }

        deinit {
            body()
        }
    }

    // MARK: User code released by the library

    @Test func cancellingAnObserverWhoseClosureHoldsAnotherTokenOfTheSameSourceNeitherTrapsNorLeavesItObserving() async throws {
        let system = try Self.system()
        let app = try system.register(.test("token-in-closure")) { IdleDelegate() }
        let heard = SharedLog<String>()
        // The companion observation lives only as long as the outer observer's closure: a helper
        // that observes for as long as its owner does.
        var companion: ObservationToken? = system.lifecycleEvents.observe { _ in heard.append("companion") }
        let outer = system.lifecycleEvents.observe { [companion] _ in
            withExtendedLifetime(companion) {}
            heard.append("outer")
        }
        companion = nil
        try await app.launch()
        #expect(heard.all.contains("companion") && heard.all.contains("outer"))
        // The outer closure was released under the source's lock; the companion token's
        // cancellation, from its deinitializer, took the lock again and the process trapped.
        outer.cancel()
        heard.clear()
        try await app.terminate(reason: .explicit)
        #expect(heard.all.isEmpty, "neither observer hears after the cancellation: \(heard.all)")
        // The source still delivers to a new observer.
        let later = system.lifecycleEvents.observe { _ in heard.append("later") }
        try await app.launch()
        #expect(heard.all.contains("later"))
        withExtendedLifetime(later) {}
    }

    // MARK: Shutdowns at once

    @Test func shutdownsFromManyTasksAtOnceTerminateEachAppOnceAndEachReturnsOnceItsAppsAreDone() async throws {
        let system = try Self.system()
        let configuration = try AppConfiguration(terminationDeadline: .seconds(30), backgroundTaskTimeLimit: .seconds(600))
        // willTerminate holds its app's termination until every call has begun, and a little more,
        // so that the calls overlap on each app.
        let callsBegun = SharedBox(0)
        var apps: [App] = []
        for (index, state) in [AppState.active, .inactive, .background, .suspended, .active].enumerated() {
            let app = try system.register(.test("shut-\(index)"), configuration: configuration) {
                let delegate = RecordingDelegate()
                delegate.onWillTerminate = { _ in
                    while callsBegun.value < 8 { usleep(1000) }
                    usleep(100_000)
                }
                return delegate
            }
            try await PublicAPIMisuseTests.bring(app, to: state)
            apps.append(app)
        }
        let identifiers = Set(apps.map(\.identifier))
        let hosted = apps
        let stillRunning = SharedLog<String>()
        // A service's signal handler and its lifecycle both shut the system down: before, only the
        // first call to reach an app got its record, and the others returned at once, while its
        // willTerminate still ran; so every call could return short, and before the apps were done.
        let calls = await withTaskGroup(of: [TerminationRecord].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    callsBegun.update { $0 += 1 }
                    let records = await system.shutDown()
                    for app in hosted where app.state != .notRunning {
                        stillRunning.append("\(app.identifier) \(app.state)")
                    }
                    return records
                }
            }
            var calls: [[TerminationRecord]] = []
            for await records in group { calls.append(records) }
            return calls
        }
        #expect(stillRunning.all.isEmpty, "a shutdown returned before its apps were terminated: \(stillRunning.all)")
        let records = calls.flatMap { $0 }
        #expect(Set(records.map(\.app)) == identifiers, "every app's record comes back from a shutdown")
        for identifier in identifiers {
            let terminations = system.terminations.filter { $0.app == identifier }
            #expect(terminations.count == 1, "\(identifier) terminated once: \(terminations)")
            // Every call that returned its record returned that one termination.
            #expect(records.filter { $0.app == identifier }.allSatisfy { $0 == terminations.first })
        }
        #expect(records.allSatisfy { $0.reason == .explicit })
        // Nothing is left for a later shutdown, and the apps launch again.
        #expect(await system.shutDown().isEmpty)
        #expect(try await apps[0].launch() == .active)
        #expect(await system.shutDown().map(\.app) == [apps[0].identifier])
    }
}
