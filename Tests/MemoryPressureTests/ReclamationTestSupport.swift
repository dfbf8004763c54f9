@testable import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport

/// What an app saves when it enters the background, to see it handed back after a termination.
struct SavedProgress: Codable, Equatable, Sendable {
    var app: String
    var page: Int
}

/// An app holding `mebibytes` of resident ballast in its heap from `registry`, which notes each
/// launch in `journal` and saves its progress on entering the background when it has an archive.
func ballastDelegate(_ mebibytes: Int, registry: PurgeRegistry, journal: TestAppJournal) -> BallastDelegate {
    let delegate = BallastDelegate(bytes: mebibytes * mebibyte, heap: registry.heap(for:), onFailure: recordIssue)
    delegate.onDidFinishLaunching = { app, options in journal.recordLaunch(of: app.identifier, options: options) }
    delegate.onDidEnterBackground = { app in
        guard app.stateArchive != nil else { return }
        do {
            try app.saveState(SavedProgress(app: app.identifier.rawValue, page: mebibytes))
        } catch {
            recordIssue("saving \(app.identifier): \(error)")
        }
    }
    return delegate
}
