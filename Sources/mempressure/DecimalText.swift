/// Numbers written with a fixed number of decimals, without Foundation's formatters.
enum DecimalText {
    /// `value` with `places` decimals, rounded half away from zero: `format(3.14159, places: 2)` is
    /// `3.14`.
    static func format(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1
        for _ in 0 ..< places { scale *= 10 }
        let scaled = Int((value.magnitude * Double(scale)).rounded())
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard places > 0 else { return sign + "\(scaled)" }
        let fraction = String(scaled % scale)
        return sign + "\(scaled / scale)." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}
