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

/// An app that asks its heap for `bytes` of ballast, 1 MiB at a time, and keeps what it is given
/// and the first refusal.
final class GreedyDelegate: AppDelegate, Sendable {
    let registry: PurgeRegistry
    let bytes: Int
    private let held = Mutex<(buffers: [HeapBuffer], refusal: MemoryPressureError?)>(([], nil))

    init(registry: PurgeRegistry, bytes: Int) {
        self.registry = registry
        self.bytes = bytes
    }

    var heldBytes: Int { held.withLock { $0.buffers.reduce(0) { $0 + $1.byteCount } } }
    var refusal: MemoryPressureError? { held.withLock { $0.refusal } }

    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        do {
            let heap = try registry.heap(for: app.identifier)
            for _ in 0..<(bytes / mebibyte) {
                let buffer = try heap.allocate(byteCount: mebibyte)
                held.withLock { $0.buffers.append(buffer) }
            }
        } catch let error as MemoryPressureError {
            held.withLock { $0.refusal = error }
        } catch {
            recordIssue("greedy: \(error)")
        }
    }
}
