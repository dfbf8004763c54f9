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
    /// Callers waiting for the thread to look at the time (``requestLook(then:)``), and whether the
    /// loop has ended (a look asked for then is answered at once).
    private let looks = LibraryLock<(waiting: [@Sendable () -> Void], ended: Bool)>(([], false))
    /// Set after a look is added to ``looks``, so that a pass with none asked for (almost every
    /// pass) does not take the lock.
    private let looksPending = Atomic<Bool>(false)

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

    /// Has `done` called, with no lock held, once the thread has taken every kernel event ready
    /// now and then done what was due at its clock's time (see ``SamplingLoop``); at once when the
    /// loop has ended. For tests that step a manual clock.
    func requestLook(then done: @escaping @Sendable () -> Void) {
        let ended = looks.withLock { looks in
            if !looks.ended { looks.waiting.append(done) }
            return looks.ended
        }
        if ended {
            callOut(done)
        } else {
            looksPending.store(true, ordering: .releasing)
            wake.wake()
        }
    }

    /// The looks asked for since the last call, for the thread to answer after its next pass.
    func takeLooks() -> [@Sendable () -> Void] {
        guard looksPending.exchange(false, ordering: .acquiringAndReleasing) else { return [] }
        return looks.withLock { looks in
            defer { looks.waiting.removeAll() }
            return looks.waiting
        }
    }

    /// Marks the loop ended and returns the looks still to answer.
    func endLooks() -> [@Sendable () -> Void] {
        looks.withLock { looks in
            looks.ended = true
            defer { looks.waiting.removeAll() }
            return looks.waiting
        }
    }
}
