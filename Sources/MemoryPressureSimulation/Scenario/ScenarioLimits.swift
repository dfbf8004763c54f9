import MemoryPressure

/// The ranges a scenario's figures must fall in, one place for the checks and their messages.
package enum ScenarioLimits {
    /// How long a session may last.
    package static let duration: ClosedRange<Duration> = .seconds(1) ... .seconds(3600)
    /// How many apps a scenario may have.
    package static let appCount = 1 ... 64
    /// The smallest budget of any scenario (most need more: ``Scenario/minimumBudgetBytes``).
    package static let budgetFloorBytes = 64 << 20
    /// The size of a cache entry.
    package static let entryBytes = 4 << 10 ... 256 << 20
    /// A cache's limit, an app's own data, a fetch, a playback buffer, a spike.
    package static let regionBytes = 0 ... 16 << 30
    /// A growth rate, in bytes per second.
    package static let bytesPerSecond = 0 ... 2 << 30
    /// The number of screens of an app.
    package static let screens = 0 ... 64
    /// One backing store.
    package static let backingStoreBytes = 0 ... 256 << 20
    /// A spike.
    package static let spikeBytes = 1 << 20 ... 16 << 30
    /// The mean gap between random decisions.
    package static let meanGap: ClosedRange<Duration> = .milliseconds(50) ... .seconds(3600)
    /// An interruption, a background launch's work, a spike's hold, background playback.
    package static let span: ClosedRange<Duration> = .milliseconds(10) ... .seconds(3600)
    /// A weight of the random process.
    package static let weight: ClosedRange<Double> = 0 ... 1_000_000

    /// Throws unless `value` is in `range`.
    static func check<Value: Comparable>(
        _ value: Value, in range: ClosedRange<Value>, _ field: String, source: String,
        show: (Value) -> String
    ) throws(SimulationError) {
        guard !range.contains(value) else { return }
        throw SimulationError(
            source: source, field: field, problem: "\(show(value)) is out of range",
            expected: "\(show(range.lowerBound)) to \(show(range.upperBound))"
        )
    }

    static func check(bytes: Int, in range: ClosedRange<Int>, _ field: String, source: String) throws(SimulationError) {
        try check(bytes, in: range, field, source: source) { "\(ByteCount($0))" }
    }

    static func check(_ duration: Duration, in range: ClosedRange<Duration>, _ field: String, source: String) throws(SimulationError) {
        try check(duration, in: range, field, source: source) { $0.text }
    }

    static func check(_ count: Int, in range: ClosedRange<Int>, _ field: String, source: String) throws(SimulationError) {
        try check(count, in: range, field, source: source) { "\($0)" }
    }

    static func check(_ number: Double, in range: ClosedRange<Double>, _ field: String, source: String) throws(SimulationError) {
        guard number.isFinite else {
            throw SimulationError(source: source, field: field, problem: "\(number) is not a number", expected: "\(range.lowerBound) to \(range.upperBound)")
        }
        try check(number, in: range, field, source: source) { "\($0)" }
    }

    /// Throws unless `range`'s bounds are in order (a range written as `[low, high]`); `source` is nil
    /// while a scenario file is decoded.
    static func checkOrder<Value: Comparable>(_ low: Value, _ high: Value, _ field: String, source: String?, show: (Value) -> String) throws(SimulationError) {
        guard low > high else { return }
        throw SimulationError(
            source: source, field: field, problem: "[\(show(low)), \(show(high))] is in the wrong order",
            expected: "[low, high] with low at most high"
        )
    }
}

extension Duration {
    /// The duration as `DurationParser` reads it: `1.5s`, `250ms`, `2m`.
    var text: String {
        let milliseconds = Int64((self / .milliseconds(1)).rounded())
        if milliseconds % 3_600_000 == 0, milliseconds != 0 { return "\(milliseconds / 3_600_000)h" }
        if milliseconds % 60_000 == 0, milliseconds >= 60_000 { return "\(milliseconds / 60_000)m" }
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000)s" }
        if milliseconds < 1000 { return "\(milliseconds)ms" }
        return "\(Double(milliseconds) / 1000)s"
    }
}
