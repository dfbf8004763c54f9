import HeapModule
import MemoryPressureLifecycle

/// The candidates for termination in one step of the ladder (the apps of one importance band in one
/// state), largest footprint first (ties to the first identifier), as a binary heap: made in O(k) for k candidates, each footprint read once,
/// and each victim taken in O(log k), so a run that terminates v of them costs O(k + v log k), not
/// a sort or a scan per victim.
struct VictimHeap {
    private struct Candidate: Comparable {
        let app: App
        let bytes: Int

        /// Larger is more of a victim: more bytes, then the earlier identifier.
        static func < (lhs: Candidate, rhs: Candidate) -> Bool {
            lhs.bytes != rhs.bytes ? lhs.bytes < rhs.bytes : lhs.app.identifier > rhs.app.identifier
        }

        static func == (lhs: Candidate, rhs: Candidate) -> Bool {
            lhs.bytes == rhs.bytes && lhs.app.identifier == rhs.app.identifier
        }
    }

    private var heap: Heap<Candidate>

    /// Ranks `apps` by `footprint`, read once for each.
    init(_ apps: [App], footprint: (App) -> Int) {
        heap = Heap(apps.map { Candidate(app: $0, bytes: footprint($0)) })
    }

    /// Takes the largest candidate left, or nil when none is.
    mutating func popLargest() -> App? {
        heap.popMax()?.app
    }
}
