extension ScenarioFile {
    /// A scenario file's text, checked in one pass before `JSONDecoder` reads it, for what the
    /// decoder reports only as "not valid JSON", or not at all:
    ///
    /// - where the syntax breaks, by line and column, and what is there instead;
    /// - text that is not UTF-8;
    /// - arrays and objects nested deeper than ``maximumDepth`` levels;
    /// - a key given twice in one object, of which the decoder would silently keep the first. Keys
    ///   compare as Swift strings do, as the decoder's do: `café` in NFC and in NFD are one key;
    /// - a number no `Double` holds: `1e400`, or `1e-400`, which would round to 0.
    ///
    /// Time is linear in the text. Memory is the keys of the objects open at once, and the
    /// recursion is at most ``maximumDepth`` deep. A UTF-8 byte order mark is skipped, as the
    /// decoder skips it.
    struct JSONCheck {
        /// The deepest nesting of arrays and objects accepted; a scenario needs 5.
        static let maximumDepth = 32

        private let bytes: [UInt8]
        private var position = 0
        /// Where the value being read is, as errors name a field.
        private var path: [any CodingKey] = []
        private var depth = 0

        private init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        /// Throws the first problem in `bytes`, naming its place; its source is given later
        /// (``SimulationError/from(_:)``).
        static func check(_ bytes: [UInt8]) throws(SimulationError) {
            var check = JSONCheck(bytes: bytes)
            try check.document()
        }

        private mutating func document() throws(SimulationError) {
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
            if String(validating: bytes, as: UTF8.self) == nil, let invalid = Self.firstInvalidUTF8(in: bytes) {
                position = invalid
                throw error("found the byte 0x\(String(bytes[invalid], radix: 16, uppercase: true)), which is not UTF-8", expected: "text in UTF-8")
            }
            skipWhitespace()
            guard position < bytes.count else {
                throw SimulationError(source: nil, problem: "is empty", expected: "a JSON object describing a scenario")
            }
            try value()
            skipWhitespace()
            guard position == bytes.count else { throw unexpected("the end of the file after the scenario's object") }
        }

        // MARK: Values

        private mutating func value() throws(SimulationError) {
            skipWhitespace()
            switch peek() ?? 0 {
            case Self.ascii("{"): try object()
            case Self.ascii("["): try array()
            case Self.ascii("\""): try string(keeping: false)
            case Self.ascii("-"), Self.ascii("0") ... Self.ascii("9"): try number()
            case Self.ascii("t"): try word("true")
            case Self.ascii("f"): try word("false")
            case Self.ascii("n"): try word("null")
            default: throw unexpected("a value: an object, an array, a string, a number, true, false or null")
            }
        }

        private mutating func object() throws(SimulationError) {
            try enter()
            var keys: [String: Int] = [:]
            skipWhitespace()
            if take("}") { return leave() }
            repeat {
                skipWhitespace()
                guard peek() == Self.ascii("\"") else { throw unexpected("a key in double quotes") }
                let offset = position
                let key = try string(keeping: true)
                if let first = keys[key] {
                    throw SimulationError(
                        source: nil, field: (path + [AnyKey(stringValue: key)]).field,
                        problem: "is given twice (at \(location(of: first)) and \(location(of: offset)))",
                        expected: "each key at most once in an object"
                    )
                }
                keys[key] = offset
                skipWhitespace()
                guard take(":") else { throw unexpected("':' after the key") }
                path.append(AnyKey(stringValue: key))
                try value()
                path.removeLast()
                skipWhitespace()
            } while take(",")
            guard take("}") else { throw unexpected("',' or '}'") }
            leave()
        }

        private mutating func array() throws(SimulationError) {
            try enter()
            skipWhitespace()
            if take("]") { return leave() }
            var index = 0
            repeat {
                path.append(AnyKey(intValue: index))
                try value()
                path.removeLast()
                index += 1
                skipWhitespace()
            } while take(",")
            guard take("]") else { throw unexpected("',' or ']'") }
            leave()
        }

        /// Steps into an array or object at `position`, unless that would nest deeper than
        /// ``maximumDepth``.
        private mutating func enter() throws(SimulationError) {
            guard depth < Self.maximumDepth else {
                throw SimulationError(
                    source: nil, problem: "nests arrays and objects deeper than \(Self.maximumDepth) levels (the limit) at \(location(of: position))",
                    expected: "at most \(Self.maximumDepth) levels (a scenario needs 5)"
                )
            }
            depth += 1
            position += 1
        }

        private mutating func leave() {
            depth -= 1
        }

        /// The string at `position` (its opening quote), decoded when `keeping` (else empty).
        @discardableResult
        private mutating func string(keeping: Bool) throws(SimulationError) -> String {
            position += 1
            var decoded: [UInt8] = []
            var run = position
            while let byte = peek() {
                switch byte {
                case Self.ascii("\""):
                    if keeping { decoded += bytes[run ..< position] }
                    position += 1
                    return String(decoding: decoded, as: UTF8.self)
                case Self.ascii("\\"):
                    if keeping { decoded += bytes[run ..< position] }
                    let scalar = try escape()
                    if keeping { decoded += Array(String(scalar).utf8) }
                    run = position
                case 0 ..< 0x20:
                    throw error("found the control character U+\(Self.hex(UInt16(byte))) inside a string", expected: "it escaped, as \\u\(Self.hex(UInt16(byte)))")
                default:
                    position += 1
                }
            }
            throw unexpected("'\"' to end the string")
        }

        /// The escape at `position` (its backslash): `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`,
        /// or `\u` and four hex digits, a surrogate pair written as two.
        private mutating func escape() throws(SimulationError) -> Unicode.Scalar {
            let start = position
            position += 1
            let simple: Unicode.Scalar? = switch peek() ?? 0 {
            case Self.ascii("\""): "\""
            case Self.ascii("\\"): "\\"
            case Self.ascii("/"): "/"
            case Self.ascii("b"): "\u{8}"
            case Self.ascii("f"): "\u{C}"
            case Self.ascii("n"): "\n"
            case Self.ascii("r"): "\r"
            case Self.ascii("t"): "\t"
            default: nil
            }
            if let simple {
                position += 1
                return simple
            }
            guard take("u") else { throw unexpected("an escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u and four hex digits") }
            let unit = try hexUnit()
            if (0xDC00 ..< 0xE000).contains(unit) {
                position = start
                throw error("found the unpaired low surrogate \\u\(Self.hex(unit))", expected: "a high surrogate (\\uD800 to \\uDBFF) before it")
            }
            guard (0xD800 ..< 0xDC00).contains(unit) else { return Unicode.Scalar(unit)! }
            guard bytes[position...].starts(with: [Self.ascii("\\"), Self.ascii("u")]) else {
                position = start
                throw error("found the unpaired high surrogate \\u\(Self.hex(unit))", expected: "a low surrogate (\\uDC00 to \\uDFFF) after it")
            }
            position += 2
            let low = try hexUnit()
            guard (0xDC00 ..< 0xE000).contains(low) else {
                position = start
                throw error("found the unpaired high surrogate \\u\(Self.hex(unit))", expected: "a low surrogate (\\uDC00 to \\uDFFF) after it")
            }
            return Unicode.Scalar(0x10000 + (UInt32(unit) - 0xD800) << 10 + (UInt32(low) - 0xDC00))!
        }

        /// The four hex digits at `position`.
        private mutating func hexUnit() throws(SimulationError) -> UInt16 {
            var unit: UInt16 = 0
            for _ in 0 ..< 4 {
                guard let digit = peek().flatMap({ Character(Unicode.Scalar($0)).hexDigitValue }) else {
                    throw unexpected("four hex digits after \\u")
                }
                unit = unit << 4 | UInt16(digit)
                position += 1
            }
            return unit
        }

        /// The number at `position`: JSON's grammar, and a value a `Double` holds.
        private mutating func number() throws(SimulationError) {
            let start = position
            _ = take("-")
            if !take("0") {
                guard digits() > 0 else { throw unexpected("a digit") }
            }
            if take(".") {
                guard digits() > 0 else { throw unexpected("a digit after the decimal point") }
            }
            let mantissa = bytes[start ..< position]
            if take("e") || take("E") {
                _ = take("+") || take("-")
                guard digits() > 0 else { throw unexpected("a digit in the exponent") }
            }
            let literal = String(decoding: bytes[start ..< position], as: UTF8.self)
            let value = Double(literal) ?? .infinity
            let roundsToZero = value == 0 && mantissa.contains { (Self.ascii("1") ... Self.ascii("9")).contains($0) }
            guard value.isFinite, !roundsToZero else {
                throw SimulationError(
                    source: nil, field: path.nonEmptyField, problem: "\(literal.escapedForTerminal(limit: 40)) is out of range",
                    expected: "a number of magnitude at most \(Double.greatestFiniteMagnitude), and 0 or at least \(Double.leastNonzeroMagnitude)"
                )
            }
        }

        /// Skips the digits at `position`; how many.
        private mutating func digits() -> Int {
            let start = position
            while let byte = peek(), (Self.ascii("0") ... Self.ascii("9")).contains(byte) { position += 1 }
            return position - start
        }

        /// Reads `word` (`true`, `false`, `null`) at `position`.
        private mutating func word(_ word: String) throws(SimulationError) {
            for byte in word.utf8 {
                guard peek() == byte else { throw unexpected(word) }
                position += 1
            }
        }

        // MARK: Reading

        private func peek() -> UInt8? {
            position < bytes.count ? bytes[position] : nil
        }

        /// Steps past `character` when it is at `position`.
        private mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard peek() == UInt8(ascii: character) else { return false }
            position += 1
            return true
        }

        private mutating func skipWhitespace() {
            while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
        }

        private static func ascii(_ character: Unicode.Scalar) -> UInt8 {
            UInt8(ascii: character)
        }

        private static func hex(_ unit: UInt16) -> String {
            let digits = String(unit, radix: 16, uppercase: true)
            return String(repeating: "0", count: 4 - digits.count) + digits
        }

        /// The offset of the first byte of `bytes` that does not begin a valid UTF-8 sequence.
        private static func firstInvalidUTF8(in bytes: [UInt8]) -> Int? {
            var parser = Unicode.UTF8.ForwardParser()
            var iterator = bytes.makeIterator()
            var offset = 0
            while true {
                switch parser.parseScalar(from: &iterator) {
                case .valid(let encoded): offset += encoded.count
                case .emptyInput: return nil
                case .error: return offset
                }
            }
        }

        // MARK: Errors

        /// An error at `position`: the JSON breaks there, `expected` is what may come instead.
        private func unexpected(_ expected: String) -> SimulationError {
            error("found \(found)", expected: expected)
        }

        private func error(_ problem: String, expected: String) -> SimulationError {
            SimulationError(source: nil, problem: "is not valid JSON at \(location(of: position)): \(problem)", expected: expected)
        }

        /// What is at `position`, for messages: `'x'`, `'\u{1B}'`, `the end of the file`.
        private var found: String {
            guard position < bytes.count else { return "the end of the file" }
            var iterator = bytes[position...].makeIterator()
            var parser = Unicode.UTF8.ForwardParser()
            guard case .valid(let encoded) = parser.parseScalar(from: &iterator) else {
                return "the byte 0x\(String(bytes[position], radix: 16, uppercase: true))"
            }
            return "'\(String(UTF8.decode(encoded)).escapedForTerminal())'"
        }

        /// `line L, column C` of `offset`, counting from 1, a column being a Unicode scalar.
        private func location(of offset: Int) -> String {
            let before = bytes[..<offset]
            let line = before.count(where: { $0 == 0x0A }) + 1
            let lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
            let column = bytes[lineStart ..< offset].count(where: { $0 & 0xC0 != 0x80 }) + 1
            return "line \(line), column \(column)"
        }
    }
}
