import Synchronization
import SystemPackage
import MemoryPressureRuntime

/// What other threads say to a sampling thread: sample now, or stop. Each request also wakes the
/// thread from its `poll` through a ``/MemoryPressureRuntime/WakePipe``.
final class SamplingControl: Sendable {
    /// Woken by every request; the sampling thread polls its descriptor.
    package let wake: WakePipe
    private let stopRequested = Atomic<Bool>(false)
    private let sampleRequested = Atomic<Bool>(false)

    package init() throws(Errno) {
        wake = try WakePipe()
    }

    var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }

    package func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        wake.wake()
    }

    func requestSample() {
        sampleRequested.store(true, ordering: .releasing)
        wake.wake()
    }

    /// Whether a sample was requested since the last call.
    func takeSampleRequest() -> Bool {
        sampleRequested.exchange(false, ordering: .acquiringAndReleasing)
    }
}
