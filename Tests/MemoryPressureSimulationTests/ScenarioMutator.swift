import Foundation
import MemoryPressureTestKit

/// A JSON document as a scenario file's fuzzing needs it, which `JSONValue` cannot hold: an
/// object's members in order and any key twice, and numbers as written (`1e400` included).
indirect enum FuzzJSON {
    case null
    case bool(Bool)
    /// JSON text written as it is: a number (`1e400` included), or brackets nested deep.
    case literal(String)
    case string(String)
    case array([FuzzJSON])
    case object([(key: String, value: FuzzJSON)])

    /// The plain value `value`, its objects' members sorted by key (so that a seed gives one text).
    init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let bool): self = .bool(bool)
        case .number(let number):
            self = .literal(number.rounded() == number && abs(number) < 1e15 ? "\(Int64(number))" : "\(number)")
        case .string(let string): self = .string(string)
        case .array(let elements): self = .array(elements.map(FuzzJSON.init))
        case .object(let members): self = .object(members.sorted { $0.key < $1.key }.map { ($0.key, FuzzJSON($0.value)) })
        }
    }

    /// The children of an array or an object.
    var childCount: Int {
        switch self {
        case .array(let elements): elements.count
        case .object(let members): members.count
        default: 0
        }
    }

    var isContainer: Bool {
        switch self {
        case .array, .object: true
        default: false
        }
    }
}

/// Files made from valid scenarios by seeded random mutations: members and elements deleted and
/// duplicated (keys given twice), values swapped for other types, huge and tiny numbers, sizes and
/// durations out of range or malformed, deep nesting, odd Unicode in keys and values (controls,
/// bidirectional overrides, combining marks, long strings), keys renamed, subtrees moved, and then
/// sometimes the bytes themselves truncated, overwritten or replaced. One seed gives one sequence.
struct ScenarioMutator {
    private var random: SplitMix64

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    /// The next file: its bytes and the mutations made, for a failure's message.
    mutating func next() -> (bytes: [UInt8], mutations: [String]) {
        var document = Self.bases[pick(Self.bases.count)]
        var mutations: [String] = []
        for _ in 0 ..< 1 + pick(4) {
            mutations.append(mutate(&document))
        }
        var bytes = Array(serialize(document).utf8)
        if chance(0.15) {
            mutations.append(mutateBytes(&bytes))
        }
        return (bytes, mutations)
    }

    // MARK: Valid scenarios to start from

    /// Valid scenarios of every shape a file can have; each fits a budget of 384 MiB.
    static let bases: [FuzzJSON] = [
        #"{ "budget": "256MiB", "apps": ["utility"] }"#,
        #"{ "name": "pair", "budget": "320MiB", "duration": "2s", "seed": 7, "apps": ["utility", "music"] }"#,
        """
        { "name": "e2e", "budget": "384MiB", "duration": "5s", "seed": 3,
          "profiles": {
            "heavy": { "base": "photos", "launch": "32MiB", "workingSet": { "growth": "16MiB", "limit": "8MiB" },
                       "screens": 2, "backingStore": "1MiB", "fetch": 0 },
            "light": { "base": "utility", "launch": "8MiB", "fetch": 0 }
          },
          "apps": [ { "name": "a", "profile": "heavy" }, { "name": "b", "profile": "heavy" }, { "name": "e", "profile": "light" } ],
          "events": [
            { "at": "400ms", "kind": "open", "app": "b" },
            { "at": "800ms", "kind": "interruption", "length": "200ms" },
            { "at": "900ms", "kind": "spike", "size": "32MiB", "hold": "300ms" },
            { "at": "1s", "kind": "backgroundLaunch", "app": "a", "work": "300ms" },
            { "at": "1500ms", "kind": "home" },
            { "at": "2s", "kind": "open", "app": "e" }
          ] }
        """,
        """
        { "name": "commute", "summary": "On the train.", "budget": "384MiB", "duration": "30s", "seed": 18446744073709551615,
          "profiles": {
            "gallery": { "base": "photos", "cache": { "kind": "media", "entrySize": ["1MiB", "3MiB"], "limit": "96MiB", "growth": "40MiB" },
                         "screens": 3, "backingStore": 1048576, "launch": "32MiB", "workingSet": { "growth": "8MiB", "limit": "64MiB" },
                         "keptOnWarning": 0.5, "fetch": "4MiB", "playback": { "buffer": "8MiB", "backgroundLength": 2.5 } },
            "silent": { "base": "music", "playback": null }
          },
          "apps": [ "utility", { "name": "gallery", "profile": "gallery" }, { "name": "radio", "profile": "silent" } ],
          "random": { "meanGap": "1.5s", "weights": { "open": 4, "spike": 1 }, "spikeSize": ["16MiB", "32MiB"], "spikeHold": "1s" },
          "events": [
            { "at": "10s", "kind": "interruption", "length": "2s" },
            { "at": "12s", "kind": "backgroundLaunch", "app": "radio", "work": "3s" },
            { "at": "15s", "kind": "open", "app": "gallery" }
          ] }
        """,
        """
        { "name": "random", "budget": "300MiB", "duration": "1m", "seed": 11, "apps": ["utility", "music", { "name": "notes", "profile": "utility" }],
          "random": { "meanGap": 0.2, "weights": { "open": 3, "home": 1, "interruption": 1, "backgroundLaunch": 1, "spike": 0 },
                      "interruptionLength": ["50ms", "400ms"], "backgroundWork": [0.1, 0.5] } }
        """,
        """
        { "budget": 268435456, "duration": 3, "apps": [{ "name": "quiet", "profile": "calm" }],
          "profiles": { "calm": { "base": "music", "playback": { "backgroundLength": "1s" }, "cache": { "kind": "images" }, "screens": 0 } },
          "events": [{ "at": 1, "kind": "backgroundLaunch", "app": "quiet", "work": 0.5 }] }
        """,
    ].map { FuzzJSON(try! JSONDecoder().decode(JSONValue.self, from: Data($0.utf8))) }

    // MARK: Mutations of the document

    private mutating func mutate(_ document: inout FuzzJSON) -> String {
        switch pick(100) {
        case 0 ..< 12: return deleteChild(&document)
        case 12 ..< 22: return duplicateChild(&document)
        case 22 ..< 34: return replaceValue(&document, "type swap") { $0.otherValue() }
        case 34 ..< 44: return replaceValue(&document, "number") { .literal($0.element(of: Self.numbers)) }
        case 44 ..< 56: return replaceValue(&document, "figure or name") { .string($0.element(of: Self.strings)) }
        case 56 ..< 62: return nest(&document)
        case 62 ..< 74: return replaceValue(&document, "odd unicode", where: \.isString) { .string($0.oddUnicode()) }
        case 74 ..< 84: return renameKey(&document)
        case 84 ..< 90: return moveSubtree(&document)
        default: return renameApp(&document)
        }
    }

    private mutating func deleteChild(_ document: inout FuzzJSON) -> String {
        guard let path = randomPath(in: document, where: { $0.childCount > 0 }) else { return "nothing to delete" }
        var removed = ""
        Self.modify(&document, at: path[...]) { node in
            switch node {
            case .array(var elements):
                let index = pick(elements.count)
                removed = "[\(index)]"
                elements.remove(at: index)
                node = .array(elements)
            case .object(var members):
                let index = pick(members.count)
                removed = members[index].key
                members.remove(at: index)
                node = .object(members)
            default: break
            }
        }
        return "delete \(removed.debugDescription)"
    }

    private mutating func duplicateChild(_ document: inout FuzzJSON) -> String {
        guard let path = randomPath(in: document, where: { $0.childCount > 0 }) else { return "nothing to duplicate" }
        var copied = ""
        Self.modify(&document, at: path[...]) { node in
            switch node {
            case .array(var elements):
                let index = pick(elements.count)
                copied = "[\(index)]"
                elements.insert(elements[index], at: pick(elements.count + 1))
                node = .array(elements)
            case .object(var members):
                let member = members[pick(members.count)]
                copied = member.key
                // The key twice, with its own value or another.
                members.insert((member.key, chance(0.5) ? member.value : otherValue()), at: pick(members.count + 1))
                node = .object(members)
            default: break
            }
        }
        return "duplicate \(copied.debugDescription)"
    }

    private mutating func replaceValue(
        _ document: inout FuzzJSON, _ name: String, where condition: (FuzzJSON) -> Bool = { _ in true },
        with make: (inout ScenarioMutator) -> FuzzJSON
    ) -> String {
        guard let path = randomPath(in: document, where: condition) else { return "no place for \(name)" }
        let value = make(&self)
        Self.modify(&document, at: path[...]) { $0 = value }
        return "\(name) at \(path.count) levels"
    }

    /// Replaces a value with arrays or objects nested 2 to 100,000 deep, written as text (a tree
    /// that deep would overflow the stack of whatever walks it, this generator included).
    private mutating func nest(_ document: inout FuzzJSON) -> String {
        let levels = element(of: [2, 5, 31, 32, 33, 100, 1000, 100_000])
        let (open, close) = chance(0.5) ? ("[", "]") : (#"{"k": "#, "}")
        return replaceValue(&document, "nested \(levels) deep") { mutator in
            let inner = mutator.otherValue()
            return .literal(String(repeating: open, count: levels) + mutator.serialize(inner) + String(repeating: close, count: levels))
        }
    }

    private mutating func renameKey(_ document: inout FuzzJSON) -> String {
        guard let path = randomPath(in: document, where: { if case .object(let members) = $0 { !members.isEmpty } else { false } }) else {
            return "no key to rename"
        }
        let name = chance(0.6) ? element(of: Self.keys) : oddUnicode()
        Self.modify(&document, at: path[...]) { node in
            guard case .object(var members) = node else { return }
            members[pick(members.count)].key = name
            node = .object(members)
        }
        return "rename a key to \(name.debugDescription)"
    }

    private mutating func moveSubtree(_ document: inout FuzzJSON) -> String {
        guard let from = randomPath(in: document, where: { _ in true }), let to = randomPath(in: document, where: { _ in true }) else {
            return "nothing to move"
        }
        let subtree = Self.node(in: document, at: from[...])
        Self.modify(&document, at: to[...]) { $0 = subtree }
        return "copy a subtree over another"
    }

    /// Gives an app a name of odd Unicode that is still a valid identifier most of the time
    /// (bidirectional marks, combining marks, emoji), so that valid files carry such names too.
    private mutating func renameApp(_ document: inout FuzzJSON) -> String {
        guard case .object(let members) = document, let index = members.firstIndex(where: { $0.key == "apps" }),
              case .array(var apps) = members[index].value, !apps.isEmpty
        else { return "no app to rename" }
        let name = element(of: ["a\u{202E}b", "\u{2067}app\u{2069}", "cafe\u{301}", "👩\u{200D}💻", "東京", "x\u{200B}y", "\u{85}", "a\u{1B}[2J"])
        let app = pick(apps.count)
        apps[app] = .object([("name", .string(name)), ("profile", .string("utility"))])
        var changed = members
        changed[index].value = .array(apps)
        document = .object(changed)
        return "rename app \(app) to \(name.debugDescription)"
    }

    // MARK: Mutations of the bytes

    private mutating func mutateBytes(_ bytes: inout [UInt8]) -> String {
        switch pick(4) {
        case 0:
            let length = pick(bytes.count + 1)
            bytes.removeLast(bytes.count - length)
            return "truncate to \(length) bytes"
        case 1:
            let count = 1 + pick(8)
            for _ in 0 ..< count where !bytes.isEmpty { bytes[pick(bytes.count)] = UInt8(truncatingIfNeeded: random.next()) }
            return "overwrite \(count) bytes"
        case 2:
            let inserted = Array(element(of: ["{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\ud800", "-", "e", "0", "\u{0}", "\u{FF}", "\u{1B}", "//", "/*"]).utf8)
            bytes.insert(contentsOf: inserted, at: pick(bytes.count + 1))
            return "insert \(String(decoding: inserted, as: UTF8.self).debugDescription)"
        default:
            bytes = (0 ..< pick(200)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            return "replace with \(bytes.count) random bytes"
        }
    }

    // MARK: Values

    static let numbers = [
        "0", "-0", "1", "-1", "7", "1.5", "0.5", "-2.5", "1e3", "1E-3", "1e400", "-1e400", "1e-400", "4.9e-324",
        "1.7976931348623157e308", "1.8e308", "9007199254740993", "9223372036854775807", "9223372036854775808",
        "18446744073709551615", "18446744073709551616", "123456789012345678901234567890", "0.000001",
        "64", "1048576", "268435456", "17179869184", "86400", "86401", "3600", "0.05", String(repeating: "9", count: 400),
    ]

    static let strings = [
        "64MiB", "1GiB", "16GiB", "17GiB", "0B", "1.9", "1.9MiB", "-5MiB", "4KiB", "lots", "", " ", "1e3", "1 MiB",
        "10ms", "1s", "5s", "59m", "1h", "2h", "-1s", "0s", "1.5s", "soon", "9999999999999999999h",
        "photos", "music", "maps", "browser", "utility", "game", "camera", "calm", "heavy", "light", "gallery",
        "open", "home", "interruption", "backgroundLaunch", "spike", "dance", "images", "media", "rebuildableObjects", "jpeg",
        ".", "..", "a/b", "a\\b", "a", "b", "e", "radio", "notes", "quiet",
    ]

    static let keys = [
        "name", "summary", "budget", "duration", "seed", "profiles", "apps", "random", "events", "base", "cache", "kind",
        "entrySize", "limit", "growth", "screens", "backingStore", "launch", "workingSet", "keptOnWarning", "fetch",
        "playback", "buffer", "backgroundLength", "meanGap", "weights", "open", "home", "interruption", "backgroundLaunch",
        "spike", "interruptionLength", "backgroundWork", "spikeSize", "spikeHold", "at", "app", "length", "work", "size",
        "hold", "profile", "colour", "",
    ]

    static let oddScalars: [String] = [
        "\u{0}", "\u{7}", "\u{1B}", "\u{1B}[31m", "\u{1B}]0;title\u{7}", "\u{7F}", "\u{85}", "\u{9B}", "\u{200B}", "\u{200D}",
        "\u{200E}", "\u{202E}", "\u{2066}", "\u{2069}", "\u{2028}", "\u{FEFF}", "\u{FFFF}", "\u{E000}", "\u{10FFFF}",
        "\u{301}", "é", "e\u{301}", "😀", "👩\u{200D}💻", "東", "\\", "\"", "/", "\n", "\t", "ß", "ﬁ", "a", "1", " ",
    ]

    /// A value of any type: scalars, empty and small containers.
    private mutating func otherValue() -> FuzzJSON {
        switch pick(8) {
        case 0: .null
        case 1: .bool(chance(0.5))
        case 2: .literal(element(of: Self.numbers))
        case 3: .string(element(of: Self.strings))
        case 4: .array([])
        case 5: .object([])
        case 6: .array([.string(element(of: Self.strings)), .literal(element(of: Self.numbers))])
        default: .object([(element(of: Self.keys), .string(element(of: Self.strings)))])
        }
    }

    /// Text of 1 to 40 odd pieces, or now and then a long run of one (up to 100,000 characters).
    private mutating func oddUnicode() -> String {
        if chance(0.03) {
            return String(repeating: element(of: Self.oddScalars), count: element(of: [300, 5_000, 100_000]))
        }
        return (0 ..< 1 + pick(40)).map { _ in element(of: Self.oddScalars) }.joined()
    }

    // MARK: Writing

    /// The document as JSON text; now and then a string is written with every character escaped
    /// (`\u0062udget` is `budget`).
    private mutating func serialize(_ value: FuzzJSON) -> String {
        switch value {
        case .null: return "null"
        case .bool(let bool): return "\(bool)"
        case .literal(let literal): return literal
        case .string(let string): return quote(string)
        case .array(let elements):
            var parts: [String] = []
            for element in elements { parts.append(serialize(element)) }
            return "[" + parts.joined(separator: ", ") + "]"
        case .object(let members):
            var parts: [String] = []
            for member in members { parts.append(quote(member.key) + ": " + serialize(member.value)) }
            return "{" + parts.joined(separator: ", ") + "}"
        }
    }

    private mutating func quote(_ string: String) -> String {
        if chance(0.05) {
            return "\"" + string.utf16.map { String(format: "\\u%04x", $0) }.joined() + "\""
        }
        var text = "\""
        for scalar in string.unicodeScalars {
            switch scalar.value {
            case 0x22: text += "\\\""
            case 0x5C: text += "\\\\"
            case 0 ..< 0x20: text += String(format: "\\u%04x", scalar.value)
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }

    // MARK: Paths and choices

    private enum Step {
        case member(Int), element(Int)
    }

    /// A random node satisfying `condition`, as the steps from the root; nil when none does.
    private mutating func randomPath(in document: FuzzJSON, where condition: (FuzzJSON) -> Bool) -> [Step]? {
        var paths: [[Step]] = []
        func collect(_ node: FuzzJSON, _ path: [Step]) {
            if condition(node) { paths.append(path) }
            switch node {
            case .array(let elements): for (index, element) in elements.enumerated() { collect(element, path + [.element(index)]) }
            case .object(let members): for (index, member) in members.enumerated() { collect(member.value, path + [.member(index)]) }
            default: break
            }
        }
        collect(document, [])
        return paths.isEmpty ? nil : paths[pick(paths.count)]
    }

    private static func node(in document: FuzzJSON, at path: ArraySlice<Step>) -> FuzzJSON {
        guard let step = path.first else { return document }
        switch (document, step) {
        case (.array(let elements), .element(let index)): return node(in: elements[index], at: path.dropFirst())
        case (.object(let members), .member(let index)): return node(in: members[index].value, at: path.dropFirst())
        default: return document
        }
    }

    private static func modify(_ document: inout FuzzJSON, at path: ArraySlice<Step>, _ body: (inout FuzzJSON) -> Void) {
        guard let step = path.first else { return body(&document) }
        switch (document, step) {
        case (.array(var elements), .element(let index)):
            modify(&elements[index], at: path.dropFirst(), body)
            document = .array(elements)
        case (.object(var members), .member(let index)):
            modify(&members[index].value, at: path.dropFirst(), body)
            document = .object(members)
        default:
            break
        }
    }

    private mutating func pick(_ count: Int) -> Int {
        Int(random.next() % UInt64(max(count, 1)))
    }

    private mutating func chance(_ probability: Double) -> Bool {
        Double(random.next() >> 11) / Double(1 << 53) < probability
    }

    private mutating func element<Element>(of choices: [Element]) -> Element {
        choices[pick(choices.count)]
    }
}

extension FuzzJSON {
    fileprivate var isString: Bool {
        if case .string = self { true } else { false }
    }
}
