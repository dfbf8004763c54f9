import DequeModule
import Synchronization
import MemoryPressureRuntime
import MemoryPressureMonitor
import MemoryPressureCaches
import MemoryPressureLifecycle

/// What a ``MemorySystem`` did, as it did it. The pressure level is the monitor's to announce
/// (``/MemoryPressureMonitor/PressureMonitor/events``).
///
/// This enumeration grows as the library does (new events, reasons and steps come with new
/// capabilities): a `switch` over it needs a `default` or `@unknown default` case, so that a
/// newer version of the library does not break it. See <doc:TypesThatGrow>.
public enum MemorySystemEvent: Sendable {
    /// Caches and stores were purged, by the step named.
    case purge(PurgeReport, step: ReclamationStep)
    /// Memory warnings were delivered, by the step named (`warning` or `softLimit`).
    case warning(WarningDelivery, step: ReclamationStep)
    /// An app was terminated, and its run loop has drained.
    case termination(TerminationRecord)
    /// A run of the ladder ended.
    case ladderRun(LadderRun)
    /// An app-heap allocation of `bytes` was refused: it would have taken the app past its hard
    /// limit, or the process past its budget with no room made in time.
    case allocationRefused(app: AppIdentifier, bytes: Int)
    /// The budget changed with the cgroup's limit; the ladder judges the footprint against the new
    /// one from the next sample on, and caches sized by the budget follow it.
    case budgetChanged(BudgetChange)
    /// The footprint stayed above the budget for the configured time with nothing left to reclaim
    /// (``MemorySystem/Configuration/unrecoverable``); once per episode.
    case unrecoverable(UnrecoverableFootprint)
}

/// What reclamation did: kept (the most recent terminations and ladder runs, the purge latencies)
/// and published as ``MemorySystemEvent``s, in one place.
final class ReclamationJournal: Sendable {
    /// The most ladder runs kept.
    static let runCapacity = 1000
    /// The most termination records kept.
    static let terminationCapacity = 10_000

    /// Rings: the oldest record is dropped in constant time once a ring is full.
    private struct Records {
        var terminations: Deque<TerminationRecord> = []
        var runs: Deque<LadderRun> = []
        var latency = PurgeLatencyStatistics()
    }

    /// Where everything recorded is published.
    let events = EventSource<MemorySystemEvent>()
    /// The time of each sample the ladder has finished with (its limits enforced, any run and any
    /// give-up done), published once it has: not API, for tests that step the clock to know that
    /// the ladder has acted on everything up to an instant.
    let handledSamples = EventSource<ContinuousClock.Instant>()
    private let records = LibraryLock(Records())

    var terminations: [TerminationRecord] { records.withLock { Self.array($0.terminations) } }
    var runs: [LadderRun] { records.withLock { Self.array($0.runs) } }

    /// The ring's elements, oldest first. An empty ring gives `[]` without a copy: copying an empty
    /// `Deque` into an array writes the count of the process's shared empty-array storage, a write
    /// that ThreadSanitizer reports against every concurrent reader of any empty array.
    private static func array<Element>(_ ring: Deque<Element>) -> [Element] {
        ring.isEmpty ? [] : Array(ring)
    }
    var latency: PurgeLatencyStatistics { records.withLock { $0.latency } }

    func purged(_ report: PurgeReport, step: ReclamationStep) {
        events.emit(.purge(report, step: step))
    }

    func warned(_ delivery: WarningDelivery, step: ReclamationStep) {
        events.emit(.warning(delivery, step: step))
    }

    func gaveUp(_ footprint: UnrecoverableFootprint) {
        events.emit(.unrecoverable(footprint))
    }

    func budgetChanged(_ change: BudgetChange) {
        events.emit(.budgetChanged(change))
    }

    func refused(app: AppIdentifier, bytes: Int) {
        events.emit(.allocationRefused(app: app, bytes: bytes))
    }

    func terminated(_ record: TerminationRecord) {
        records.withLock { records in
            if records.terminations.count == Self.terminationCapacity { records.terminations.removeFirst() }
            records.terminations.append(record)
        }
        events.emit(.termination(record))
    }

    func ran(_ run: LadderRun) {
        records.withLock { records in
            if records.runs.count == Self.runCapacity { records.runs.removeFirst() }
            records.runs.append(run)
            if let latency = run.latency { records.latency.record(latency) }
        }
        events.emit(.ladderRun(run))
    }
}
