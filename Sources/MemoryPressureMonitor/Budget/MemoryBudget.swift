import MemoryPressureRuntime
import MemoryPressureMeasurement
/// The memory the process may use, and where along it the pressure levels begin.
///
/// ```swift
/// let budget = try MemoryBudget.resolve(.controlGroup(ratio: 0.9))
/// let fixed = try MemoryBudget(parsing: "2GiB")
/// ```
///
/// While a system runs, its budget follows the cgroup's limit (see ``PressureMonitor/Configuration/limitCheckInterval``):
/// a budget resolved from the limit (``Source/automatic(ratio:)``, ``Source/controlGroup(ratio:)``)
/// is resolved again with the same ratio when the limit changes, and any other budget is lowered to
/// the limit times ``Source/defaultRatio`` while the limit is below it. Two budgets are equal when
/// they hold the same bytes and thresholds, whatever their source.
public struct MemoryBudget: Hashable, Sendable, CustomStringConvertible {
    /// Bytes the footprint is held against.
    public let totalBytes: Int
    /// Where the levels begin and end, as fractions of ``totalBytes``.
    public let thresholds: Thresholds
    /// Where the bytes came from: ``Source/bytes(_:)`` for a budget given in bytes or parsed from a
    /// size, else the source it was resolved from.
    public let source: Source

    /// Where a budget comes from.
    ///
    /// This enumeration grows as the library does (new events, reasons and steps come with new
    /// capabilities): a `switch` over it needs a `default` or `@unknown default` case, so that a
    /// newer version of the library does not break it. See “Types That Grow” in the MemoryPressure documentation.
    public enum Source: Hashable, Sendable {
        /// A fixed number of bytes.
        case bytes(Int)
        /// The cgroup's limit (the lower of `memory.max` and `memory.high`) times `ratio`.
        case controlGroup(ratio: Double = 0.9)
        /// The machine's physical memory times `ratio`.
        case physicalMemory(ratio: Double = 0.9)
        /// The cgroup's limit times `ratio` when it has one, else physical memory times `ratio`.
        case automatic(ratio: Double = 0.9)

        /// The ratio of the sources that take one, 0.9; also the ratio of the cgroup's limit that a
        /// budget given in bytes is lowered to when the limit falls below it.
        public static let defaultRatio = 0.9

        /// Whether a budget from this source is resolved again when the cgroup's limit changes.
        package var followsControlGroupLimit: Bool {
            switch self {
            case .controlGroup, .automatic: true
            case .bytes, .physicalMemory: false
            }
        }
    }

    /// A budget of `totalBytes`, checked to be positive and to fit in this machine's memory and
    /// the process's cgroup limit.
    ///
    /// - Parameters:
    ///   - totalBytes: The bytes the footprint is held against: at least 1, and at most the
    ///     cgroup's `memory.max` when it sets one below physical memory, else physical memory.
    ///   - thresholds: Where the levels begin and end; ``Thresholds/standard`` by default.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidBudget`` when
    ///   `totalBytes` is zero or negative or larger than the machine or the cgroup allows.
    public init(totalBytes: Int, thresholds: Thresholds = .standard) throws(MemoryPressureError) {
        try self.init(totalBytes: totalBytes, thresholds: thresholds, limits: .current(), source: nil)
    }

    /// A budget of `totalBytes`, checked to be positive and to fit in `limits`.
    package init(
        totalBytes: Int,
        thresholds: Thresholds = .standard,
        limits: MemoryLimits,
        source: Source? = nil
    ) throws(MemoryPressureError) {
        guard totalBytes > 0 else { throw .budgetNotPositive(bytes: totalBytes) }
        let ceiling = limits.ceiling
        guard totalBytes <= ceiling.bytes else {
            throw .budgetExceedsLimit(bytes: totalBytes, limitBytes: ceiling.bytes, limitName: ceiling.name)
        }
        self.init(checked: totalBytes, thresholds: thresholds, source: source ?? .bytes(totalBytes))
    }

    /// A budget whose bytes are known to be valid.
    private init(checked totalBytes: Int, thresholds: Thresholds, source: Source) {
        self.totalBytes = totalBytes
        self.thresholds = thresholds
        self.source = source
    }

    /// A budget written as a size, such as `512MiB`, `2GiB`, `1.5G` or `800000000`: a number with
    /// an optional unit, `K`, `M`, `G`, `T` or `KiB`, `MiB`, `GiB`, `TiB` for powers of 1024 and
    /// `KB`, `MB`, `GB`, `TB` for powers of 1000.
    ///
    /// Units are case-insensitive and may be separated from the number by a space; a fraction of a
    /// unit is rounded down to whole bytes, and a fraction of a byte (`1.9`) is an error.
    ///
    /// - Parameters:
    ///   - text: The size.
    ///   - thresholds: Where the levels begin and end; ``Thresholds/standard`` by default.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/unparsableValue`` when the
    ///   text is not a size, or ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidBudget`` when the size is not a
    ///   valid budget here (see ``init(totalBytes:thresholds:)``).
    public init(parsing text: String, thresholds: Thresholds = .standard) throws(MemoryPressureError) {
        try self.init(parsing: text, thresholds: thresholds, limits: .current())
    }

    /// A budget written as a size, checked against `limits`.
    package init(
        parsing text: String,
        thresholds: Thresholds = .standard,
        limits: MemoryLimits
    ) throws(MemoryPressureError) {
        let size: ByteCount
        do {
            size = try ByteCount(parsing: text)
        } catch {
            throw .budgetUnparsable(error)
        }
        try self.init(totalBytes: size.bytes, thresholds: thresholds, limits: limits)
    }

    /// Resolves a budget from `source` against this machine's memory and the process's cgroup.
    ///
    /// The cgroup's limit is the lower of its `memory.max` and `memory.high` (cgroup v2), read once
    /// for this call; a cgroup that cannot be read counts as having no limit, and the reason is
    /// logged at `notice`.
    ///
    /// - Parameters:
    ///   - source: Where the bytes come from: a fixed count, the cgroup's limit, physical memory, or
    ///     the cgroup's limit when there is one and physical memory otherwise.
    ///   - thresholds: Where the levels begin and end; ``Thresholds/standard`` by default.
    /// - Returns: The budget, its bytes rounded down.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidBudget`` when the
    ///   ratio is not in (0, 1] or the result is not a valid budget (see
    ///   ``init(totalBytes:thresholds:)``), or ``/MemoryPressureRuntime/MemoryPressureError/Code/noControlGroupLimit`` when
    ///   the source is ``Source/controlGroup(ratio:)`` and the cgroup sets no limit.
    public static func resolve(_ source: Source, thresholds: Thresholds = .standard) throws(MemoryPressureError) -> MemoryBudget {
        try resolve(source, thresholds: thresholds, limits: .current())
    }

    /// Resolves a budget from `source` against `limits`.
    package static func resolve(
        _ source: Source,
        thresholds: Thresholds = .standard,
        limits: MemoryLimits
    ) throws(MemoryPressureError) -> MemoryBudget {
        func scaled(_ bytes: Int, by ratio: Double) throws(MemoryPressureError) -> Int {
            guard ratio > 0, ratio <= 1 else { throw .budgetRatioOutOfRange(ratio) }
            return Int(Double(bytes) * ratio)
        }
        let total: Int
        switch source {
        case .bytes(let bytes):
            total = bytes
        case .controlGroup(let ratio):
            guard let limit = limits.controlGroupLimit else { throw .budgetWithoutControlGroupLimit }
            total = try scaled(limit, by: ratio)
        case .physicalMemory(let ratio):
            total = try scaled(limits.physicalBytes, by: ratio)
        case .automatic(let ratio):
            total = try scaled(limits.controlGroupLimit ?? limits.physicalBytes, by: ratio)
        }
        return try MemoryBudget(totalBytes: total, thresholds: thresholds, limits: limits, source: source)
    }

    /// This budget as it stands under `limits`, which may have changed since it was made: resolved
    /// again from its source when that follows the cgroup's limit (physical memory times the ratio
    /// when the limit is gone); otherwise this budget, lowered to the cgroup's hard limit times
    /// ``Source/defaultRatio`` while that limit is below it. Keeps the source and the thresholds.
    package func following(_ limits: MemoryLimits) -> MemoryBudget {
        var bytes: Int
        switch source {
        case .controlGroup(let ratio), .automatic(let ratio):
            bytes = Int(Double(limits.controlGroupLimit ?? limits.physicalBytes) * ratio)
        case .bytes(let configured):
            bytes = configured
        case .physicalMemory(let ratio):
            bytes = Int(Double(limits.physicalBytes) * ratio)
        }
        if !source.followsControlGroupLimit, let maximum = limits.controlGroupMaximum, bytes > maximum {
            bytes = Int(Double(maximum) * Source.defaultRatio)
        }
        return MemoryBudget(checked: max(1, bytes), thresholds: thresholds, source: source)
    }

    /// Whether two budgets hold the same bytes and thresholds, whatever their sources.
    public static func == (lhs: MemoryBudget, rhs: MemoryBudget) -> Bool {
        lhs.totalBytes == rhs.totalBytes && lhs.thresholds == rhs.thresholds
    }

    /// Hashes the bytes and the thresholds, as ``==(_:_:)`` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(totalBytes)
        hasher.combine(thresholds)
    }

    /// The footprint at which `level` begins (rising into it).
    ///
    /// - Parameter level: The level.
    /// - Returns: The bytes at which the level begins: 0 for ``/MemoryPressureMeasurement/PressureLevel/normal``.
    public func bytes(enteringAbove level: PressureLevel) -> Int {
        switch level {
        case .normal: 0
        case .warning: fraction(thresholds.ratios.warning)
        case .critical: fraction(thresholds.ratios.critical)
        }
    }

    /// The footprint below which `level` ends (falling out of it).
    ///
    /// - Parameter level: The level.
    /// - Returns: The bytes below which the level ends: 0 for ``/MemoryPressureMeasurement/PressureLevel/normal``.
    public func bytes(leavingBelow level: PressureLevel) -> Int {
        switch level {
        case .normal: 0
        case .warning: fraction(thresholds.ratios.warningRecovery)
        case .critical: fraction(thresholds.ratios.criticalRecovery)
        }
    }

    private func fraction(_ ratio: Double) -> Int {
        Int(Double(totalBytes) * ratio)
    }

    /// The budget and its thresholds, for people, such as
    /// `1.5 GiB (warning at 1.2 GiB, critical at 1.4 GiB)`.
    public var description: String {
        "\(ByteCount(totalBytes)) (warning at \(ByteCount(bytes(enteringAbove: .warning))), "
            + "critical at \(ByteCount(bytes(enteringAbove: .critical))))"
    }
}

extension MemoryBudget {
    /// Where the levels begin and end, as fractions of the budget, with hysteresis: a level begins
    /// at its threshold and ends only below its lower recovery threshold.
    public struct Thresholds: Hashable, Sendable {
        /// The four fractions of the budget.
        public struct Ratios: Hashable, Sendable {
            /// Warning begins at this fraction.
            public var warning: Double
            /// Critical begins at this fraction.
            public var critical: Double
            /// Warning ends below this fraction.
            public var warningRecovery: Double
            /// Critical ends below this fraction.
            public var criticalRecovery: Double
        }

        /// The fractions, checked to be in order.
        public let ratios: Ratios

        /// Thresholds at the given fractions of the budget, checked to be in the order
        /// `0 < warningRecovery < warning < critical <= 1` and
        /// `warningRecovery <= criticalRecovery < critical`.
        ///
        /// - Parameters:
        ///   - warning: The fraction at which the warning level begins.
        ///   - critical: The fraction at which the critical level begins.
        ///   - warningRecovery: The fraction below which the warning level ends.
        ///   - criticalRecovery: The fraction below which the critical level ends (falling to
        ///     warning).
        /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidBudget`` when the
        ///   fractions are out of that order.
        public init(
            warning: Double,
            critical: Double,
            warningRecovery: Double,
            criticalRecovery: Double
        ) throws(MemoryPressureError) {
            let ratios = Ratios(
                warning: warning, critical: critical,
                warningRecovery: warningRecovery, criticalRecovery: criticalRecovery
            )
            guard warningRecovery > 0, warningRecovery < warning, warning < critical, critical <= 1,
                  warningRecovery <= criticalRecovery, criticalRecovery < critical
            else { throw .thresholdsOutOfOrder(ratios) }
            self.ratios = ratios
        }

        /// Warning from 80% of the budget until below 70%; critical from 95% until below 85%.
        public static let standard = Thresholds(
            checked: Ratios(warning: 0.80, critical: 0.95, warningRecovery: 0.70, criticalRecovery: 0.85)
        )

        private init(checked ratios: Ratios) {
            self.ratios = ratios
        }
    }
}
