import Synchronization

/// The time the library's timing reads: the process's continuous clock, or one a test steps.
///
/// Instants are `ContinuousClock.Instant`s on either, so that deadlines made from either compare
/// and add as usual. What differs is how a thread waits for one: on the continuous clock it sleeps
/// in the kernel until then; on a manual clock it waits until the clock is stepped past it.
package protocol LibraryClock: Sendable {
    /// The time now.
    var now: ContinuousClock.Instant { get }

    /// The instant of the continuous clock until which a thread waiting for `deadline` may sleep
    /// (it wakes then and looks again), or nil when only a step of the clock brings `deadline`
    /// (a manual clock): the waiter then sleeps until ``onStep(_:)``'s call wakes it.
    func sleepDeadline(for deadline: ContinuousClock.Instant) -> ContinuousClock.Instant?

    /// Has `wake` called, with no lock of the clock held, each time the clock is stepped; nothing
    /// for a clock that moves by itself.
    func onStep(_ wake: @escaping @Sendable () -> Void)
}

/// The process's continuous clock: the library's time outside tests.
package struct SystemClock: LibraryClock {
    package init() {}

    package var now: ContinuousClock.Instant { .now }

    package func sleepDeadline(for deadline: ContinuousClock.Instant) -> ContinuousClock.Instant? { deadline }

    package func onStep(_ wake: @escaping @Sendable () -> Void) {}
}

/// A clock that moves only when a test steps it, so that tests of timing logic sleep for nothing:
/// a deadline runs when the clock is stepped to it, never before, whatever the machine's load.
package final class ManualClock: LibraryClock {
    private struct State {
        var now: ContinuousClock.Instant
        var waiters: [@Sendable () -> Void] = []
    }

    private let state: LibraryLock<State>

    /// A clock that reads `start` (the continuous clock's time now, by default) until stepped.
    package init(start: ContinuousClock.Instant = .now) {
        state = LibraryLock(State(now: start))
    }

    package var now: ContinuousClock.Instant { state.withLock { $0.now } }

    package func sleepDeadline(for deadline: ContinuousClock.Instant) -> ContinuousClock.Instant? { nil }

    package func onStep(_ wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.waiters.append(wake) }
    }

    /// Moves the clock `duration` forward (not back: a negative one does nothing), and wakes every
    /// thread that waits for a deadline on it.
    package func step(by duration: Duration) {
        let waiters = state.withLock { state in
            if duration > .zero { state.now += duration }
            return state.waiters
        }
        callOut { for wake in waiters { wake() } }
    }
}
