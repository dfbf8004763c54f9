/// Numbers written with a fixed number of decimals, without Foundation's formatters.
public enum DecimalText {
    /// `value` with `places` decimals, rounded half away from zero: `format(3.14159, places: 2)` is
    /// `3.14`.
    public static func format(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1
        for _ in 0 ..< places { scale *= 10 }
        let scaled = Int((value.magnitude * Double(scale)).rounded())
        let fraction = String(scaled % scale)
        let padded = String(repeating: "0", count: places - fraction.count) + fraction
        return (value < 0 && scaled != 0 ? "-" : "") + "\(scaled / scale)" + (places > 0 ? "." + padded : "")
    }
}

extension Duration {
    /// The duration in seconds.
    var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }

    /// The duration in milliseconds.
    var inMilliseconds: Double { inSeconds * 1000 }

    /// The duration in seconds with two decimals.
    var secondsText: String {
        DecimalText.format(inSeconds, places: 2)
    }
}
