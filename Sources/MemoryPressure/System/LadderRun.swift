import MemoryPressureRuntime
import MemoryPressureMeasurement
/// One run of the reclamation ladder: what it did, step by step, and how long the footprint took to
/// come back under target.
///
/// Encodable as an object: `level` by name, `crossingTime`, `startTime` and `endTime` (seconds since
/// boot, see ``encode(to:)``), `footprintBeforeBytes`, `footprintAfterBytes`, `targetBytes`, `steps`
/// (each a ``Step``) and `latencySeconds`; a figure that is nil is left out.
public struct LadderRun: Hashable, Sendable, Encodable {
    /// One step's share of a run.
    ///
    /// Encodable as an object: `step` by name, `durationSeconds`, `releasedBytes` and `terminated`
    /// (app identifiers).
    public struct Step: Hashable, Sendable, Encodable {
        /// The step.
        public var step: ReclamationStep
        /// How long it took.
        public var duration: Duration
        /// Bytes it released: purged caches' and stores' bytes, terminated apps' returned bytes.
        public var releasedBytes: Int
        /// The apps it terminated, in order.
        public var terminated: [AppIdentifier]

        private enum CodingKeys: String, CodingKey {
            case step, releasedBytes, terminated
            case duration = "durationSeconds"
        }

        /// Encodes the step's share, its duration as a number of seconds.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(step, forKey: .step)
            try container.encode(seconds: duration, forKey: .duration)
            try container.encode(releasedBytes, forKey: .releasedBytes)
            try container.encode(terminated, forKey: .terminated)
        }
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

extension LadderRun {
    private enum CodingKeys: String, CodingKey {
        case level, crossingTime, startTime, endTime, footprintBeforeBytes, footprintAfterBytes, targetBytes, steps
        case latency = "latencySeconds"
    }

    /// Encodes the run. Its times are numbers of seconds on the continuous clock's timeline, which on
    /// Linux is `CLOCK_BOOTTIME`: seconds since boot, as the first figure of `/proc/uptime`.
    /// `latencySeconds` is a number of seconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(level, forKey: .level)
        try container.encode(secondsSinceBoot: crossingTime, forKey: .crossingTime)
        try container.encode(secondsSinceBoot: startTime, forKey: .startTime)
        try container.encode(secondsSinceBoot: endTime, forKey: .endTime)
        try container.encodeIfPresent(footprintBeforeBytes, forKey: .footprintBeforeBytes)
        try container.encodeIfPresent(footprintAfterBytes, forKey: .footprintAfterBytes)
        try container.encode(targetBytes, forKey: .targetBytes)
        try container.encode(steps, forKey: .steps)
        try container.encodeIfPresent(seconds: latency, forKey: .latency)
    }
}

/// A step of the reclamation ladder: what the system did, and what chose an app for termination.
///
/// Codable as its name, such as `"terminateSuspended"`.
///
/// This enumeration grows as the library does (new events, reasons and steps come with new
/// capabilities): a `switch` over it needs a `default` or `@unknown default` case, so that a
/// newer version of the library does not break it. See <doc:TypesThatGrow>.
public enum ReclamationStep: String, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// An app entered the background: its caches were purged per category and its backing stores
    /// released.
    case enteringBackground
    /// Caches and stores were purged and freed pages returned to the operating system.
    case purge
    /// Memory warnings were delivered to the running apps.
    case warning
    /// Suspended apps' memory was paged out to compressed swap (zram), largest first, until the
    /// footprint was under target (see ``Compression``).
    case compressSuspended
    /// Background apps' memory was paged out to compressed swap, largest first, once no suspended
    /// app was left to compress (see ``Compression``).
    case compressBackground
    /// Suspended apps were terminated, largest first, until the footprint was under target.
    case terminateSuspended
    /// Background apps were terminated (with `willTerminate`), largest first, once no suspended app
    /// of their importance band was left.
    case terminateBackground
    /// An app over its soft limit was sent a memory warning.
    case softLimit
    /// An app over its hard limit was terminated.
    case hardLimit

    public var description: String { rawValue }
}

extension LadderRun: CustomStringConvertible {
    /// The run for people and logs: `ladder run at critical: footprint 900 MiB to 700 MiB (target
    /// 720 MiB), steps purge, terminateSuspended; under target 12.5 ms after the crossing`.
    public var description: String {
        let footprint = "\(footprintBeforeBytes.map { "\(ByteCount($0))" } ?? "unknown") to "
            + "\(footprintAfterBytes.map { "\(ByteCount($0))" } ?? "unknown")"
        let steps = steps.isEmpty ? "none" : steps.map(\.step.description).joined(separator: ", ")
        let outcome = latency.map { "under target \($0.readable) after the crossing" } ?? "still above target"
        return "ladder run at \(level): footprint \(footprint) (target \(ByteCount(targetBytes))), steps \(steps); \(outcome)"
    }
}
