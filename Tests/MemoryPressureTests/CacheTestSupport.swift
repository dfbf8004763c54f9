import MemoryPressure
import MemoryPressureTestKit
import Testing

/// Discardable content for tests, counting its accesses with the library's counter.
final class TestContent: DiscardableContent {
    let id: Int
    private let access = ContentAccessCount()

    init(id: Int) {
        self.id = id
    }

    func beginContentAccess() -> Bool { access.begin() }
    func endContentAccess() { access.end() }
    func discardContentIfPossible() { access.discardIfPossible() }
    var isContentDiscarded: Bool { access.isDiscarded }
    var openAccesses: Int { access.openAccesses }
}

extension MemorySystem {
    /// Runs the system, launches `app` and sends it to the background, and returns the purge
    /// reports published once one names the app (the system purges an app entering the background),
    /// and, when `untilSuspended`, those published until the app has suspended: its purge on
    /// entering the background runs before it may suspend, so none of that step comes later.
    func purgeReports(ofEnteringTheBackground app: App, untilSuspended: Bool = false) async throws -> [PurgeReport] {
        let reports = SharedLog<PurgeReport>()
        let observation = events.observe { event in
            if case .purge(let report, _) = event { reports.append(report) }
        }
        defer { observation.cancel() }
        try await running {
            #expect(await eventually { self.monitor.latestSample != nil })
            try await app.launch()
            try await app.enterBackground()
            #expect(await eventually { reports.all.contains { $0.entries.contains { $0.app == app.identifier } } })
            if untilSuspended { #expect(await eventually { app.systemState == .suspended }) }
        }
        return reports.all
    }
}
