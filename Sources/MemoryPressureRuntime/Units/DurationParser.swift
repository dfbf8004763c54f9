/// Parses durations written for people: `500ms`, `2s`, `1.5m`, `250us`, `1h`.
package enum DurationParser {
    /// The accepted form, as error messages state it.
    static let form = "a non-negative number followed by a unit ns, us, ms, s, m (or min) or h, such as 500ms, 2s or 1.5m"

    /// Parses `text`: a non-negative number (with an optional fraction) followed by a unit, which is
    /// required; a space between them is allowed.
    package static func parse(_ text: String) throws(MemoryPressureError) -> Duration {
        let failure = MemoryPressureError.unparsable(quantity: "duration", text: text, expected: form)
        let trimmed = Substring(text).trimmingPrefixAndSuffixWhitespace()
        let number = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unit = trimmed.dropFirst(number.count).trimmingPrefixAndSuffixWhitespace()
        guard number.first?.isNumber == true, number.last?.isNumber == true,
              number.count(where: { $0 == "." }) <= 1,
              let value = Double(number),
              let nanosecondsPerUnit = nanoseconds(perUnit: unit.lowercased())
        else { throw failure }
        let nanoseconds = value * nanosecondsPerUnit
        guard nanoseconds < Double(Int64.max) else { throw failure }
        return .nanoseconds(Int64(nanoseconds.rounded()))
    }

    private static func nanoseconds(perUnit unit: String) -> Double? {
        switch unit {
        case "ns": 1
        case "us", "µs": 1e3
        case "ms": 1e6
        case "s": 1e9
        case "m", "min": 60e9
        case "h": 3600e9
        default: nil
        }
    }
}
