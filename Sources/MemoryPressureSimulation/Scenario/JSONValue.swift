/// A JSON document as read, before its fields are checked: so that a scenario file's problems can
/// be told field by field, with their paths, and unknown keys are caught rather than ignored.
enum JSONValue: Decodable, Hashable, Sendable {
    case null
    case bool(Bool)
    /// A whole number that fits in `Int64`, or in `UInt64` for the non-negative ones.
    case integer(Int64)
    case unsigned(UInt64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: Key.self) {
            var fields: [String: JSONValue] = [:]
            for key in object.allKeys {
                fields[key.stringValue] = try object.decode(JSONValue.self, forKey: key)
            }
            self = .object(fields)
        } else if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd {
                elements.append(try array.decode(JSONValue.self))
            }
            self = .array(elements)
        } else {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() {
                self = .null
            } else if let bool = try? value.decode(Bool.self) {
                self = .bool(bool)
            } else if let unsigned = try? value.decode(UInt64.self) {
                self = .unsigned(unsigned)
            } else if let integer = try? value.decode(Int64.self) {
                self = .integer(integer)
            } else if let number = try? value.decode(Double.self) {
                self = .number(number)
            } else {
                self = .string(try value.decode(String.self))
            }
        }
    }

    /// What the value is, for error messages: "a string", "an array", …
    var kind: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .integer(let value): "the number \(value)"
        case .unsigned(let value): "the number \(value)"
        case .number(let value): "the number \(value)"
        case .string(let value): "the string \(value.debugDescription)"
        case .array: "an array"
        case .object: "an object"
        }
    }

    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }

        init(stringValue: String) {
            self.stringValue = stringValue
        }

        init?(intValue: Int) {
            nil
        }
    }
}
