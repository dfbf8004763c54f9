import MemoryPressure

/// The fields of one JSON object of a scenario file, read one by one under the object's path, so
/// that every error names its field (`apps[2].profile`) and keys nobody read are reported.
struct JSONFields {
    let values: [String: JSONValue]
    let path: String
    let source: String
    private var read: Set<String> = []

    /// The fields of `value` at `path`; throws unless it is an object.
    init(_ value: JSONValue, path: String, source: String) throws(SimulationError) {
        guard case .object(let values) = value else {
            throw SimulationError(source: source, field: path.isEmpty ? nil : path, problem: "is \(value.kind)", expected: "an object")
        }
        self.values = values
        self.path = path
        self.source = source
    }

    /// The path of `key` in this object.
    func field(_ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    /// The value of `key`, or nil when it is missing or null.
    mutating func optional(_ key: String) -> JSONValue? {
        read.insert(key)
        guard let value = values[key], value != .null else { return nil }
        return value
    }

    /// The value of `key`; throws when it is missing or null, saying what it should be.
    mutating func required(_ key: String, expected: String) throws(SimulationError) -> JSONValue {
        guard let value = optional(key) else {
            throw SimulationError(source: source, field: field(key), problem: "is missing", expected: expected)
        }
        return value
    }

    /// Throws when the object has a key that was never read.
    func finish() throws(SimulationError) {
        guard let unknown = values.keys.filter({ !read.contains($0) }).sorted().first else { return }
        throw SimulationError(
            source: source, field: field(unknown), problem: "is not a known key",
            expected: "one of \(read.sorted().joined(separator: ", "))"
        )
    }

    // MARK: Typed reads

    mutating func string(_ key: String, expected: String) throws(SimulationError) -> String? {
        try optional(key).map { value throws(SimulationError) in try text(value, field(key), expected: expected) }
    }

    mutating func size(_ key: String) throws(SimulationError) -> Int? {
        try optional(key).map { value throws(SimulationError) in try size(value, field(key)) }
    }

    mutating func duration(_ key: String) throws(SimulationError) -> Duration? {
        try optional(key).map { value throws(SimulationError) in try duration(value, field(key)) }
    }

    mutating func number(_ key: String) throws(SimulationError) -> Double? {
        try optional(key).map { value throws(SimulationError) in
            switch value {
            case .integer(let number): return Double(number)
            case .unsigned(let number): return Double(number)
            case .number(let number): return number
            default: throw mismatch(value, field(key), expected: "a number")
            }
        }
    }

    mutating func integer(_ key: String) throws(SimulationError) -> Int? {
        try optional(key).map { value throws(SimulationError) in
            switch value {
            case .integer(let number): return Int(number)
            case .unsigned(let number) where number <= UInt64(Int.max): return Int(number)
            default: throw mismatch(value, field(key), expected: "a whole number")
            }
        }
    }

    mutating func sizeRange(_ key: String) throws(SimulationError) -> ClosedRange<Int>? {
        try optional(key).map { value throws(SimulationError) in
            let (low, high) = try pair(value, field(key)) { value, field throws(SimulationError) in try size(value, field) }
            try ScenarioLimits.checkOrder(low, high, field(key), source: source) { "\(ByteCount($0))" }
            return low ... high
        }
    }

    mutating func durationRange(_ key: String) throws(SimulationError) -> ClosedRange<Duration>? {
        try optional(key).map { value throws(SimulationError) in
            let (low, high) = try pair(value, field(key)) { value, field throws(SimulationError) in try duration(value, field) }
            try ScenarioLimits.checkOrder(low, high, field(key), source: source) { $0.text }
            return low ... high
        }
    }

    // MARK: Conversions

    func text(_ value: JSONValue, _ field: String, expected: String) throws(SimulationError) -> String {
        guard case .string(let text) = value else { throw mismatch(value, field, expected: expected) }
        return text
    }

    /// A size: a string such as "64MiB" or a whole number of bytes.
    func size(_ value: JSONValue, _ field: String) throws(SimulationError) -> Int {
        switch value {
        case .unsigned(let bytes) where bytes <= UInt64(Int.max):
            return Int(bytes)
        case .integer(let bytes):
            throw SimulationError(source: source, field: field, problem: "\(bytes) is negative", expected: "a size of 0 bytes or more")
        case .string(let text):
            let bytes: Int
            do {
                bytes = try ByteCount(parsing: text).bytes
            } catch {
                throw SimulationError(source: source, field: field, problem: "\(text.debugDescription) is not a size", expected: ScenarioLimits.sizeForm)
            }
            guard bytes >= 0 else {
                throw SimulationError(source: source, field: field, problem: "\(text.debugDescription) is negative", expected: "a size of 0 bytes or more")
            }
            return bytes
        default:
            throw mismatch(value, field, expected: "a size such as \"64MiB\" or a whole number of bytes")
        }
    }

    /// A duration: a string such as "1.5s" or a number of seconds.
    func duration(_ value: JSONValue, _ field: String) throws(SimulationError) -> Duration {
        let seconds: Double
        switch value {
        case .string(let text):
            return try ScenarioOverrides.parseDuration(text, source: source, field: field)
        case .integer(let number): seconds = Double(number)
        case .unsigned(let number): seconds = Double(number)
        case .number(let number): seconds = number
        default:
            throw mismatch(value, field, expected: "a duration such as \"1.5s\" or a number of seconds")
        }
        guard seconds >= 0, seconds <= 86_400 else {
            throw SimulationError(source: source, field: field, problem: "\(seconds) seconds is out of range", expected: "0 to 86400 seconds")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// A range written `[low, high]`, or a single value for both.
    private func pair<Value>(
        _ value: JSONValue, _ field: String, _ convert: (JSONValue, String) throws(SimulationError) -> Value
    ) throws(SimulationError) -> (Value, Value) {
        guard case .array(let bounds) = value else {
            let single = try convert(value, field)
            return (single, single)
        }
        guard bounds.count == 2 else {
            throw SimulationError(source: source, field: field, problem: "has \(bounds.count) elements", expected: "[low, high]")
        }
        return (try convert(bounds[0], "\(field)[0]"), try convert(bounds[1], "\(field)[1]"))
    }

    func mismatch(_ value: JSONValue, _ field: String, expected: String) -> SimulationError {
        SimulationError(source: source, field: field, problem: "is \(value.kind)", expected: expected)
    }
}
