import Jemalloc
@testable import MemoryPressure
import MemoryTestSupport
import Synchronization
import Testing

let mebibyte = 1 << 20

/// What an app saves when it enters the background, to see it handed back after a termination.
struct SavedProgress: Codable, Equatable, Sendable {
    var app: String
    var page: Int
}

/// What the test apps saw: the state each launch restored, by app, in launch order.
final class AppJournal: Sendable {
    private let restored = Mutex<[AppIdentifier: [SavedProgress?]]>([:])

    func recordLaunch(of app: AppIdentifier, restoring state: SavedProgress?) {
        restored.withLock { $0[app, default: []].append(state) }
    }

    func restoredStates(of app: AppIdentifier) -> [SavedProgress?] {
        restored.withLock { $0[app] ?? [] }
    }
}

/// An app that fills its own heap with `bytes` of ballast on launch (every page written, so it is
/// resident), keeps it until it is terminated, saves its progress on entering the background and
/// records what each launch restored.
final class BallastDelegate: AppDelegate {
    let registry: PurgeRegistry
    let bytes: Int
    let journal: AppJournal
    private var ballast: [HeapBuffer] = []

    init(registry: PurgeRegistry, bytes: Int, journal: AppJournal) {
        self.registry = registry
        self.bytes = bytes
        self.journal = journal
    }

    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        journal.recordLaunch(of: app.identifier, restoring: try? options.restoredState(as: SavedProgress.self))
        do {
            ballast = try residentBuffers(in: registry.heap(for: app.identifier), totalBytes: bytes)
        } catch {
            Issue.record("ballast for \(app.identifier): \(error)")
        }
    }

    func didEnterBackground(_ app: isolated App) {
        guard app.stateArchive != nil else { return }
        do {
            try app.saveState(SavedProgress(app: app.identifier.rawValue, page: bytes / mebibyte))
        } catch {
            Issue.record("saving \(app.identifier): \(error)")
        }
    }
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
            Issue.record("greedy: \(error)")
        }
    }
}

/// Buffers of 1 MiB in `heap` adding up to `totalBytes`, each page written so it is resident.
func residentBuffers(in heap: AppHeap, totalBytes: Int) throws -> [HeapBuffer] {
    try (0..<(totalBytes / mebibyte)).map { _ in
        let buffer = try heap.allocate(byteCount: mebibyte)
        buffer.withUnsafeMutableBytes { bytes in
            for offset in stride(from: 0, to: bytes.count, by: 4096) { bytes[offset] = 1 }
        }
        return buffer
    }
}

/// The process's resident bytes, after returning jemalloc's dirty pages so they do not count.
func settledResidentBytes() throws -> Int {
    try Jemalloc.purgeAllArenas()
    return try ProcessMemory.current().residentBytes
}

/// Thresholds that put critical close above the target, so a test can ask for an exact number of
/// terminations: warning at 80%, critical at 85%, target (warning recovery) at 75%.
let tightThresholds = try! MemoryBudget.Thresholds(
    warning: 0.80, critical: 0.85, warningRecovery: 0.75, criticalRecovery: 0.78
)

extension MemorySystem.Configuration {
    /// A configuration for tests: the real process footprint judged against a budget whose target
    /// is `targetBytes`, sampled every 20 ms, with no settle time or stall input; apps save their
    /// state in `archive` when given.
    static func test(
        targetBytes: Int, thresholds: MemoryBudget.Thresholds = tightThresholds, archiveIn archive: TemporaryDirectory? = nil
    ) throws -> Self {
        let budget = try MemoryBudget(
            totalBytes: Int(Double(targetBytes) / thresholds.ratios.warningRecovery), thresholds: thresholds
        )
        var configuration = MemorySystem.Configuration(
            budget: budget,
            stateArchiveDirectory: archive?.path
        )
        configuration.monitor.interval = .milliseconds(20)
        configuration.monitor.settleTime = .zero
        configuration.monitor.stallThresholds = nil
        configuration.monitor.stallTrigger = nil
        return configuration
    }
}

extension MemorySystem {
    /// Runs the system while `body` runs, then cancels it.
    func running<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.run() }
            defer { group.cancelAll() }
            return try await body()
        }
    }
}

extension MemorySystemEvent {
    /// The ladder run, when this event is one that got the footprint under target.
    var runUnderTarget: LadderRun? {
        if case .ladderRun(let run) = self, run.latency != nil { return run }
        return nil
    }
}
