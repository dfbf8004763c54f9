/// One memory warning, as the system sends it to every running app.
public struct MemoryWarning: Hashable, Sendable {
    /// The pressure level that prompted the warning.
    public var level: PressureLevel
    /// The reading the level was decided on, when there is one.
    public var sample: MemorySample?
    /// When the warning was raised.
    public var time: ContinuousClock.Instant

    /// A warning at `level`, raised at `time`.
    package init(level: PressureLevel, sample: MemorySample? = nil, time: ContinuousClock.Instant = .now) {
        self.level = level
        self.sample = sample
        self.time = time
    }
}
