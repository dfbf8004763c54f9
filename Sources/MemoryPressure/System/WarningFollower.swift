import MemoryPressureLifecycle
/// Follows the memory warnings the ladder posts to their end and records each delivery, so that
/// reclamation never waits for an app to finish with a warning: a terminated suspended app runs no
/// code and needs nothing from the others.
struct WarningFollower: Sendable {
    private let posted: AsyncStream<(PostedWarning, ReclamationStep)>
    private let continuation: AsyncStream<(PostedWarning, ReclamationStep)>.Continuation

    init() {
        (posted, continuation) = AsyncStream.makeStream(of: (PostedWarning, ReclamationStep).self)
    }

    /// Hands `warning`, posted by `step`, over to be followed.
    func follow(_ warning: PostedWarning, step: ReclamationStep) {
        callOut { _ = continuation.yield((warning, step)) }
    }

    /// Records each followed warning's delivery in `journal` once its apps have finished with it or
    /// `timeout` has passed, several at once, until ``finish()``.
    func run(recordingIn journal: ReclamationJournal, timeout: Duration) async {
        await withDiscardingTaskGroup { group in
            for await (warning, step) in posted {
                group.addTask {
                    journal.warned(await warning.delivery(timeout: timeout), step: step)
                }
            }
        }
    }

    /// Ends ``run(recordingIn:timeout:)`` once the warnings already handed over are recorded.
    func finish() {
        callOut { continuation.finish() }
    }
}
