/// The threads a memory system's apps run on: the deadline timers' thread and the run-loop pool's
/// workers, owned by the system as swift-nio's event loops are owned by their group.
///
/// The threads start as work arrives (the first deadline, the first app's callback) and stop with
/// ``shutDown()``, which the system calls as it shuts down and as it goes away; work that arrives
/// afterwards starts them again. Nothing of it is process-wide: two systems have two groups.
@_spi(Benchmarks) public final class AppThreadGroup: Sendable {
    /// Every deadline of the group's apps and waits.
    package let timers: DeadlineTimers
    /// The workers the apps' run loops run on.
    package let pool: RunLoopPool

    /// A group with no thread yet, whose deadlines follow the continuous clock.
    @_spi(Benchmarks) public convenience init() {
        self.init(clock: SystemClock())
    }

    /// A group with no thread yet, whose deadlines follow `clock` (a manual one, for a test that
    /// steps it).
    package init(clock: any LibraryClock) {
        timers = DeadlineTimers(clock: clock)
        pool = RunLoopPool(timers: timers)
    }

    /// A group whose pool has `baseWorkers` workers, growing past blocked ones to
    /// `maximumWorkers`, whose added workers end after `retireAfter` without work, and whose
    /// deadlines (the pool's watchdog among them) follow `clock`: for the pool's own tests.
    package init(baseWorkers: Int, maximumWorkers: Int? = nil, retireAfter: Duration = .seconds(2), clock: any LibraryClock = SystemClock()) {
        timers = DeadlineTimers(clock: clock)
        pool = RunLoopPool(baseWorkers: baseWorkers, maximumWorkers: maximumWorkers, retireAfter: retireAfter, timers: timers)
    }

    /// A group kept for the whole process and never shut down (one the tests share): workers
    /// added past blocked callbacks stay instead of retiring, since a worker that retires is joined
    /// by the next to retire or by a shut-down, and the last would be left unjoined at exit.
    package static func forTheProcessLifetime() -> AppThreadGroup {
        AppThreadGroup(baseWorkers: RunLoopPool.standardBaseWorkers, retireAfter: .seconds(365 * 86_400))
    }

    /// Stops the workers (once the run loops ready now have run; one blocked in an app's callback
    /// ends when it returns) and the timers' thread (the deadlines set are dropped), and waits for
    /// them.
    @_spi(Benchmarks) public func shutDown() {
        pool.stop()
        timers.stop()
    }
}
