import MemoryPressureRuntime
import MemoryPressureCaches
import MemoryPressureLifecycle

/// What the system keeps of one termination, as its ``/MemoryPressureLifecycle/AppTermination``'s
/// part: what the call that asked for it wants recorded, what the app held as it ended, then the
/// record that every call joining the termination returns.
final class TerminationBook: Sendable {
    /// The app as the termination ended it, before its run loop let go of anything.
    struct Ending: Sendable {
        let reason: TerminationReason
        let state: AppState
        let footprintBytes: Int
        let time: ContinuousClock.Instant
        /// The app's heap, closed, whose live bytes are what the app still holds.
        let heap: AppHeap?
    }

    /// The ladder step that asked for the termination; nil when none did.
    let step: ReclamationStep?
    /// What the ladder measured as it chose the app, for a step's termination.
    let decision: TerminationRecord.LadderDecision?
    /// The app as it ended, until the record is written.
    private let ending = LibraryLock<Ending?>(nil)
    /// The termination's record, once the app's run loop has let go of its memory.
    let record = Completion<TerminationRecord>()

    init(step: ReclamationStep? = nil, decision: TerminationRecord.LadderDecision? = nil) {
        self.step = step
        self.decision = decision
    }

    /// The book of `termination`: the one the call that asked for it gave, or a new one for a
    /// termination the system did not ask for (a deadline, an expired task, a process's exit).
    static func of(_ termination: AppTermination) -> TerminationBook {
        termination.part { TerminationBook() }
    }

    /// Notes how the app ended.
    func ended(_ ending: Ending) {
        self.ending.withLock { $0 = ending }
    }

    /// Takes how the app ended, for its record: once.
    func takeEnding() -> Ending? {
        ending.withLock { ending in
            defer { ending = nil }
            return ending
        }
    }
}
