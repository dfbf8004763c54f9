/// One run of the reclamation ladder: what it did, step by step, and how long the footprint took to
/// come back under target.
public struct LadderRun: Hashable, Sendable {
    /// One step's share of a run.
    public struct Step: Hashable, Sendable {
        /// The step.
        public var step: ReclamationStep
        /// How long it took.
        public var duration: Duration
        /// Bytes it released: purged caches' and stores' bytes, terminated apps' returned bytes.
        public var releasedBytes: Int
        /// The apps it terminated, in order.
        public var terminated: [AppIdentifier]
    }

    /// The level the run climbed to.
    public var level: PressureLevel
    /// When the sample that crossed the warning threshold was taken: where the purge latency starts.
    public var crossingTime: ContinuousClock.Instant
    /// When the run began and ended.
    public var startTime: ContinuousClock.Instant
    /// When the run ended.
    public var endTime: ContinuousClock.Instant
    /// The footprint the run began with, and the one it measured last.
    public var footprintBeforeBytes: Int?
    /// The footprint measured at the end of the run.
    public var footprintAfterBytes: Int?
    /// The footprint the ladder works down to.
    public var targetBytes: Int
    /// The steps taken, in order.
    public var steps: [Step]
    /// From the crossing sample to the measurement that found the footprint under target, when this
    /// run got it there; nil when it ended above target.
    public var latency: Duration?
}
