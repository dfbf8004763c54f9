/// What a scenario file's models share: errors that name the field by its path and say what the
/// value given is, and objects that reject the keys they do not know.
extension ScenarioFile {
    /// Any key of a JSON object, or an index into an array.
    struct AnyKey: CodingKey {
        let stringValue: String
        let intValue: Int?
        init(stringValue: String) { (self.stringValue, intValue) = (stringValue, nil) }
        init(intValue: Int) { (stringValue, self.intValue) = ("\(intValue)", intValue) }
    }

    /// What a JSON value is, for messages: `the number 7`, `the string "x"`, `an array`.
    struct Found: Decodable {
        let text: String

        init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer()
            text = if (try? decoder.container(keyedBy: AnyKey.self)) != nil { "an object" }
                else if (try? decoder.unkeyedContainer()) != nil { "an array" }
                else if value.decodeNil() { "null" }
                else if let bool = try? value.decode(Bool.self) { "\(bool)" }
                else if let number = try? value.decode(UInt64.self) { "the number \(number)" }
                else if let number = try? value.decode(Int64.self) { "the number \(number)" }
                else if let number = try? value.decode(Double.self) { "the number \(number)" }
                else { "the string \(try value.decode(String.self).echoed())" }
        }
    }
}

extension SimulationError {
    /// An error in the field of a scenario file at `path`; ``from(_:)`` gives it the file.
    static func at(_ path: [any CodingKey], _ problem: String, expected: String) -> SimulationError {
        SimulationError(source: nil, field: path.nonEmptyField, problem: problem, expected: expected)
    }
}

extension [any CodingKey] {
    /// The path as errors name a field: `apps[2].profile`. Each key is escaped and cut to 40
    /// characters (``escapedForTerminal(limit:)``).
    var field: String {
        reduce(into: "") { path, key in
            path += key.intValue.map { "[\($0)]" } ?? (path.isEmpty ? "" : ".") + key.stringValue.escapedForTerminal(limit: 40)
        }
    }

    /// ``field``, or nil for the file's top level.
    var nonEmptyField: String? {
        isEmpty ? nil : field
    }
}

extension Decoder {
    /// The value's fields; throws unless it is an object.
    func object<Key: CodingKey>(_ keys: Key.Type) throws -> KeyedDecodingContainer<Key> {
        do {
            return try container(keyedBy: keys)
        } catch {
            throw try mismatch(expected: "an object")
        }
    }

    /// Throws when the object has a key other than `known`, naming the first such key.
    func rejectUnknownKeys(_ known: [some CodingKey]) throws {
        let names = known.map(\.stringValue)
        let keys = try container(keyedBy: ScenarioFile.AnyKey.self).allKeys.filter { !names.contains($0.stringValue) }
        guard let unknown = keys.min(by: { $0.stringValue < $1.stringValue }) else { return }
        throw SimulationError.at(codingPath + [unknown], "is not a known key", expected: "one of \(names.sorted().joined(separator: ", "))")
    }

    /// An error saying what the value is and that `expected` is accepted instead.
    func mismatch(expected: String) throws -> SimulationError {
        .at(codingPath, "is \(try ScenarioFile.Found(from: self).text)", expected: expected)
    }
}

extension KeyedDecodingContainer {
    /// The value of `key`, nil when it is missing or null; anything but a `Value` is an error saying
    /// what it is and that `expected` is accepted. (JSONDecoder reports a number that does not fit
    /// `Value` with an error of its own, not a `DecodingError`.)
    func field<Value: Decodable>(_ key: Key, expected: String) throws -> Value? {
        do {
            return try decodeIfPresent(Value.self, forKey: key)
        } catch let error as SimulationError {
            throw error
        } catch {
            throw try superDecoder(forKey: key).mismatch(expected: expected)
        }
    }

    /// The case of `Choice` named at `key`, nil when it is missing or null; another name is an
    /// error saying it is not `noun` and naming the cases.
    func choice<Choice: RawRepresentable<String> & CaseIterable>(_ key: Key, _ noun: String, expected: String) throws -> Choice? {
        guard let name: String = try field(key, expected: expected) else { return nil }
        guard let choice = Choice(rawValue: name) else {
            throw SimulationError.at(codingPath + [key], "\(name.echoed()) is not \(noun)", expected: "one of \(Choice.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return choice
    }

    /// `value`, or an error saying that `key` is missing and `expected` is accepted.
    func required<Value>(_ value: Value?, _ key: Key, expected: String) throws -> Value {
        guard let value else { throw SimulationError.at(codingPath + [key], "is missing", expected: expected) }
        return value
    }

    /// Reads the object at `key` with `read`, unless it is missing or null, then rejects its keys
    /// other than `Nested`'s.
    func object<Nested: CodingKey & CaseIterable>(_ key: Key, _ keys: Nested.Type, read: (KeyedDecodingContainer<Nested>) throws -> Void) throws {
        guard contains(key), try !decodeNil(forKey: key) else { return }
        let decoder = try superDecoder(forKey: key)
        try read(try decoder.object(keys))
        try decoder.rejectUnknownKeys(Array(Nested.allCases))
    }

    /// The size at `key` in bytes, nil when it is missing or null.
    func size(_ key: Key) throws -> Int? {
        try decodeIfPresent(ScenarioFile.Size.self, forKey: key)?.value
    }

    /// The duration at `key`, nil when it is missing or null.
    func duration(_ key: Key) throws -> Duration? {
        try decodeIfPresent(ScenarioFile.Span.self, forKey: key)?.value
    }

    /// The range at `key` of figures read as `Bound`, nil when it is missing or null.
    func range<Bound: ScenarioFile.Figure>(_ key: Key, of _: Bound.Type) throws -> ClosedRange<Bound.Value>? {
        try decodeIfPresent(ScenarioFile.Bounds<Bound>.self, forKey: key)?.range
    }
}
