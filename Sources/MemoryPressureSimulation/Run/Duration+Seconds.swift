extension Duration {
    /// The duration in seconds.
    var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }

    /// The duration in milliseconds.
    var inMilliseconds: Double { inSeconds * 1000 }

    /// The duration in seconds with two decimals, rounded half away from zero: `0.25`.
    var secondsText: String {
        let hundredths = Int((inSeconds.magnitude * 100).rounded())
        let fraction = hundredths % 100
        return (self < .zero && hundredths != 0 ? "-" : "") + "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }
}
