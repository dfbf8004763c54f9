import MemoryPressureRuntime
/// A bounded give-up: what the system does when the footprint has stayed above the budget for a
/// while and the ladder has nothing left to purge or terminate (every cache empty, no suspended or
/// background app left, the active app's own memory over the budget).
///
/// Off by default. Choose ``Action/exit(_:)`` for a replica that an orchestrator restarts (a
/// Kubernetes Deployment, a systemd unit with `Restart=`): a clean restart within seconds beats
/// hours at high CPU in reclaim until the kernel's OOM killer ends it anyway. Choose
/// ``Action/report`` where an exit would lose work nobody can redo, or no one restarts the process:
/// the event and the `memory_pressure_unrecoverable_total` metric page an operator instead.
public struct Unrecoverable: Hashable, Sendable {
    /// What the system does when it gives up.
    ///
    /// This enumeration grows as the library does (new events, reasons and steps come with new
    /// capabilities): a `switch` over it needs a `default` or `@unknown default` case, so that a
    /// newer version of the library does not break it. See <doc:TypesThatGrow>.
    public enum Action: Hashable, Sendable {
        /// Publishes ``MemorySystemEvent/unrecoverable(_:)`` and logs at `error`, once per episode.
        case report
        /// Reports as ``report`` does, then logs at `critical` and exits the process with this status.
        case exit(Int32)
    }

    /// How long the footprint stays above the budget with nothing left to reclaim before the
    /// system gives up; more than zero.
    public var duration: Duration
    /// What it does then.
    public var action: Action

    /// Gives up with `action` once the footprint has stayed above the budget for `duration` with
    /// nothing left to reclaim.
    ///
    /// - Parameters:
    ///   - duration: How long; more than zero.
    ///   - action: ``Action/report`` or ``Action/exit(_:)``.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidConfiguration`` when
    ///   `duration` is not more than zero.
    public init(after duration: Duration, action: Action) throws(MemoryPressureError) {
        guard duration > .zero else { throw .unrecoverableDurationNotPositive(duration) }
        self.duration = duration
        self.action = action
    }
}

/// What ``MemorySystemEvent/unrecoverable(_:)`` reports: the footprint over the budget, and for
/// how long, with nothing left to reclaim.
public struct UnrecoverableFootprint: Hashable, Sendable, CustomStringConvertible {
    /// The footprint at the sample that gave up.
    public var footprintBytes: Int
    /// The budget in force then.
    public var budgetBytes: Int
    /// How long the footprint had stayed above the budget with nothing left to reclaim.
    public var duration: Duration
    /// When the system gave up.
    public var time: ContinuousClock.Instant

    package init(footprintBytes: Int, budgetBytes: Int, duration: Duration, time: ContinuousClock.Instant) {
        self.footprintBytes = footprintBytes
        self.budgetBytes = budgetBytes
        self.duration = duration
        self.time = time
    }

    /// `footprint 1.1 GiB over the budget of 1 GiB for 30 s with nothing left to reclaim`.
    public var description: String {
        "footprint \(ByteCount(footprintBytes)) over the budget of \(ByteCount(budgetBytes)) for \(duration.readable) with nothing left to reclaim"
    }
}

/// Times how long the footprint stays above the budget while the ladder has nothing left to
/// reclaim, and says when to give up: once per episode, which ends when the footprint falls to the
/// budget or the ladder reclaims something again.
struct UnrecoverableClock {
    let duration: Duration
    private var overSince: ContinuousClock.Instant?
    private var gaveUp = false

    init(duration: Duration) {
        self.duration = duration
    }

    /// Takes a sample's footprint at `time`; returns the give-up when it is due.
    mutating func observe(
        footprint: Int?, budgetBytes: Int, nothingLeft: Bool, at time: ContinuousClock.Instant
    ) -> UnrecoverableFootprint? {
        guard let footprint, footprint > budgetBytes, nothingLeft else {
            overSince = nil
            gaveUp = false
            return nil
        }
        let since = overSince ?? time
        overSince = since
        guard !gaveUp, time - since >= duration else { return nil }
        gaveUp = true
        return UnrecoverableFootprint(footprintBytes: footprint, budgetBytes: budgetBytes, duration: time - since, time: time)
    }
}
