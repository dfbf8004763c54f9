import MemoryPressure
import Synchronization

/// Counts what the memory system did, for the live display and the report, keeps the moments the
/// timeline chart marks (warnings, purges and terminations), and times the ladder's reaction to
/// each episode of pressure.
final class EventTally: Sendable {
    struct Counts: Hashable, Sendable {
        /// Level changes into warning and into critical (rises and falls, not repeats).
        var warningLevelChanges = 0
        var criticalLevelChanges = 0
        /// Memory-warning fan-outs to the running apps, and what they reached.
        var warnings = 0
        var delegatesReached = 0
        var viewControllersReached = 0
        var observersReached = 0
        /// Purges that released something, and the bytes they released.
        var purges = 0
        var purgedBytes = 0
        /// Every termination, in order.
        var terminations: [TerminationRecord] = []
        /// The moments to mark on the chart.
        var marks: [Timeline.Mark] = []
        /// The ladder's reaction to each episode of pressure.
        var reactions = ReactionTimes()
    }

    private let counts = Mutex(Counts())
    private let start: ContinuousClock.Instant

    init(start: ContinuousClock.Instant) {
        self.start = start
    }

    var snapshot: Counts { counts.withLock { $0 } }

    /// Counts a level announced by the monitor.
    func count(_ change: PressureChange) {
        guard change.kind != .repeated else { return }
        counts.withLock { counts in
            switch change.level {
            case .warning: counts.warningLevelChanges += 1
            case .critical: counts.criticalLevelChanges += 1
            case .normal: break
            }
        }
    }

    /// Counts one of the system's events.
    func count(_ event: MemorySystemEvent, at time: ContinuousClock.Instant = .now) {
        let seconds = (time - start).inSeconds
        counts.withLock { counts in
            switch event {
            case .warning(let delivery, _):
                counts.warnings += 1
                counts.delegatesReached += delivery.delegatesReached
                counts.viewControllersReached += delivery.viewControllersReached
                counts.observersReached += delivery.observersReached
                let seconds = (delivery.warning.time - start).inSeconds
                counts.marks.append(.init(seconds: seconds, kind: .warning, label: "\(delivery.warning.level) warning", bytes: 0))
            case .purge(let report, _):
                guard report.releasedBytes > 0 else { return }
                counts.purges += 1
                counts.purgedBytes += report.releasedBytes
                counts.marks.append(.init(seconds: seconds, kind: .purge, label: "purge", bytes: report.releasedBytes))
            case .termination(let record):
                counts.terminations.append(record)
                let seconds = (record.time - start).inSeconds
                counts.marks.append(.init(seconds: seconds, kind: .termination, label: record.app.rawValue, bytes: record.returnedBytes))
            case .ladderRun(let run):
                counts.reactions.record(crossing: run.crossingTime, start: run.startTime)
            case .allocationRefused, .budgetChanged, .unrecoverable:
                break
            }
        }
    }
}
