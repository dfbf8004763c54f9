import MemoryPressure

extension ScenarioFile {
    /// A figure of a scenario file, which can also be a bound of a range.
    protocol Figure: Decodable {
        associatedtype Value: Comparable
        var value: Value { get }
        /// `value` as errors write it.
        static func text(_ value: Value) -> String
    }

    /// A size: a string such as "64MiB" (read by `ByteCount(parsing:)`) or a whole number of bytes.
    struct Size: Figure {
        let value: Int

        static func text(_ value: Int) -> String { "\(ByteCount(value))" }

        init(from decoder: any Decoder) throws {
            let single = try decoder.singleValueContainer()
            let negative = { (given: String) in SimulationError.at(decoder.codingPath, "\(given) is negative", expected: "a size of 0 bytes or more") }
            if let bytes = try? single.decode(Int.self) {
                guard bytes >= 0 else { throw negative("\(bytes)") }
                value = bytes
            } else if let text = try? single.decode(String.self) {
                let bytes: Int
                do {
                    bytes = try ByteCount(parsing: text).bytes
                } catch {
                    throw SimulationError(source: nil, field: decoder.codingPath.nonEmptyField, cause: error)
                }
                guard bytes >= 0 else { throw negative(text.echoed()) }
                value = bytes
            } else {
                throw try decoder.mismatch(expected: "a size such as \"64MiB\" or a whole number of bytes")
            }
        }
    }

    /// A duration: a string such as "1.5s" (read by `DurationParser`) or a number of seconds.
    struct Span: Figure {
        let value: Duration

        static func text(_ value: Duration) -> String { value.text }

        init(from decoder: any Decoder) throws {
            let single = try decoder.singleValueContainer()
            if let text = try? single.decode(String.self) {
                value = try ScenarioOverrides.parseDuration(text, source: nil, field: decoder.codingPath.field)
            } else if let seconds = try? single.decode(Double.self) {
                guard seconds >= 0, seconds <= 86_400 else {
                    throw SimulationError.at(decoder.codingPath, "\(seconds) seconds is out of range", expected: "0 to 86400 seconds")
                }
                value = .milliseconds(Int64((seconds * 1000).rounded()))
            } else {
                throw try decoder.mismatch(expected: "a duration such as \"1.5s\" or a number of seconds")
            }
        }
    }

    /// A range written `[low, high]`, or one value for both.
    struct Bounds<Bound: Figure>: Decodable {
        let range: ClosedRange<Bound.Value>

        init(from decoder: any Decoder) throws {
            let low, high: Bound.Value
            if var list = try? decoder.unkeyedContainer() {
                guard list.count == 2 else { throw SimulationError.at(decoder.codingPath, "has \(list.count ?? 0) elements", expected: "[low, high]") }
                (low, high) = (try list.decode(Bound.self).value, try list.decode(Bound.self).value)
            } else {
                low = try Bound(from: decoder).value
                high = low
            }
            try ScenarioLimits.checkOrder(low, high, decoder.codingPath.field, source: nil, show: Bound.text)
            range = low ... high
        }
    }
}
