extension Duration {
    /// The duration in whole nanoseconds, as the suites' custom metrics record times.
    public var wholeNanoseconds: Int {
        Int(self / .nanoseconds(1))
    }
}

/// Nanoseconds `work` takes.
public func nanoseconds(_ work: () throws -> Void) rethrows -> Int {
    try ContinuousClock().measure(work).wholeNanoseconds
}
