@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryTestSupport
import PropertyBased
import Testing

/// Random text thrown at every parser of text the system reads from people: sizes, durations, app
/// identifiers, budgets. Each input is accepted, or rejected with an error that names the input and
/// the accepted form; none crashes. Well-formed input checks the value against an exact oracle.
@Suite struct TextParserPropertyTests {
    /// Inputs tried per generator per parser.
    static let count = 2_000

    @Test func sizesAreAcceptedOrRejectedNamingTheTextAndTheForm() async {
        let tried = await BadInput.eachText(count: Self.count) { text in
            do throws(MemoryPressureError) {
                let size = try ByteCount(parsing: text)
                #expect(text.contains { $0.isASCII && $0.isNumber })
                // What was accepted parses the same once its unit is spelled in capitals.
                #expect(try ByteCount(parsing: text.uppercased()) == size)
            } catch {
                #expect(error.code == .unparsableValue)
                #expect(error.description.contains(text.echoed()))
                #expect(error.description.contains("expected " + ByteCount.parsingForm))
                #expect(printsSafelyOnATerminal(error.description))
            }
        }
        #expect(tried == 3 * Self.count)
    }

    @Test func durationsAreAcceptedOrRejectedNamingTheTextAndTheForm() async {
        let tried = await BadInput.eachText(count: Self.count) { text in
            do throws(MemoryPressureError) {
                let duration = try DurationParser.parse(text)
                #expect(duration >= .zero)
            } catch {
                #expect(error.code == .unparsableValue)
                #expect(error.description.contains(text.echoed()))
                #expect(error.description.contains("expected " + DurationParser.form))
                #expect(printsSafelyOnATerminal(error.description))
            }
        }
        #expect(tried == 3 * Self.count)
    }

    @Test func appIdentifiersAreAcceptedExactlyWhenSafeAsOnePathComponent() async throws {
        let tried = await BadInput.eachText(count: Self.count) { text in
            let expected = Self.identifierProblem(text)
            do throws(MemoryPressureError) {
                let identifier = try AppIdentifier(text)
                #expect(expected == nil)
                #expect(identifier.rawValue == text)
                #expect(identifier.description == text)
            } catch {
                #expect(error.code == .invalidIdentifier)
                // The message names the text given and what is wrong with it, as the oracle says.
                #expect(error.description == expected.map { Self.identifierMessage(text, problem: $0) })
                #expect(error.description.hasPrefix("app identifier "))
                #expect(error.description.contains("expected 1 to 255 UTF-8 bytes"))
            }
        }
        #expect(tried == 3 * Self.count)
    }

    /// The rules of `AppIdentifier`, restated: what is wrong with `text`, as the message says it,
    /// or nil.
    static func identifierProblem(_ text: String) -> String? {
        if text.isEmpty { return "is empty" }
        if text.utf8.count > 255 { return "is \(text.utf8.count) bytes long" }
        if text == "." || text == ".." { return "is a relative path component" }
        if text.unicodeScalars.contains(where: { $0 == "/" || $0 == "\\" }) { return "contains a path separator" }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return "contains a control character"
        }
        return nil
    }

    /// The message for `text` rejected for `problem`: the text (its first 40 scalars when longer),
    /// the problem and the accepted form.
    static func identifierMessage(_ text: String, problem: String) -> String {
        let shown = text.unicodeScalars.count > 40
            ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(40))).debugDescription + "…"
            : text.debugDescription
        return "app identifier \(shown) \(problem); expected 1 to 255 UTF-8 bytes, without '/', '\\\\' or control characters, and not '.' or '..'"
    }

    @Test func budgetsAreAcceptedOnlyBetweenOneByteAndTheLimit() async {
        let limits = MemoryLimits(physicalBytes: 16 << 30, controlGroupMaximum: 4 << 30)
        let tried = await BadInput.eachText(count: Self.count) { text in
            do throws(MemoryPressureError) {
                let budget = try MemoryBudget(parsing: text, limits: limits)
                #expect((1...(4 << 30)).contains(budget.totalBytes))
            } catch {
                #expect(error.code == .invalidBudget || error.code == .unparsableValue)
                #expect(error.description.hasPrefix("memory budget"))
                #expect(error.description.contains("expected"))
                if error.code == .unparsableValue {
                    #expect(error.description.hasPrefix("memory budget: size \(text.echoed()) is not "))
                    #expect(error.description.hasSuffix("; expected \(ByteCount.parsingForm)"))
                }
            }
        }
        #expect(tried == 3 * Self.count)
    }
}

extension TextParserPropertyTests {
    static let sizeUnits: [(spelling: String, scale: Int)] = [
        ("", 1), ("B", 1), ("K", 1 << 10), ("KiB", 1 << 10), ("M", 1 << 20), ("MiB", 1 << 20),
        ("G", 1 << 30), ("GiB", 1 << 30), ("T", 1 << 40), ("TiB", 1 << 40),
        ("KB", 1_000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("TB", 1_000_000_000_000),
    ]

    /// A number with 0 to 4 decimals, a unit (in either case), a space or not, and a sign or not.
    static let wellFormedSize = zip(
        Gen.int(in: 0...10_000_000), Gen.int(in: 0...4), Gen.int(in: 0...9_999),
        Gen.int(in: 0...(sizeUnits.count - 1)), Gen.int(in: 0...7)
    )

    @Test func wellFormedSizesParseToTheirExactByteCount() async throws {
        let tally = InputTally()
        await propertyCheck(count: Self.count, input: Self.wellFormedSize) { whole, decimals, fraction, unit, style in
            tally.record()
            let digits = decimals == 0 ? "" : String(String(fraction).suffix(decimals))
            let (spelling, scale) = Self.sizeUnits[unit]
            let negative = style & 1 != 0
            let text = (negative ? "-" : "") + "\(whole)" + (digits.isEmpty ? "" : ".\(digits)")
                + (style & 2 != 0 ? " " : "") + (style & 4 != 0 ? spelling.lowercased() : spelling)
            // A fraction of a byte is an error; of a larger unit, rounded down to whole bytes.
            if scale == 1, digits.contains(where: { $0 != "0" }) {
                let error = #expect(throws: MemoryPressureError.self, "\(text)") { try ByteCount(parsing: text) }
                #expect(error?.description.contains("is not a whole number of bytes") == true, "\(text)")
                return
            }
            // The exact value: whole bytes of the fraction, rounded down; past Int.max, an error.
            let fractionBytes = digits.isEmpty ? 0 : Int(digits)! * scale / Self.pow10(digits.count)
            let (wholeBytes, overflow) = whole.multipliedReportingOverflow(by: scale)
            let (magnitude, sumOverflow) = wholeBytes.addingReportingOverflow(fractionBytes)
            guard !overflow, !sumOverflow else {
                let error = #expect(throws: MemoryPressureError.self, "\(text)") { try ByteCount(parsing: text) }
                #expect(error?.code == .unparsableValue, "\(text)")
                return
            }
            let parsed = try ByteCount(parsing: text)
            #expect(parsed.bytes == (negative ? -magnitude : magnitude), "\(text)")
        }
        #expect(tally.total == Self.count)
    }

    @Test func aSizeShownForPeopleParsesBackToWithinItsRounding() async throws {
        let tally = InputTally()
        await propertyCheck(count: Self.count, input: Gen.int(in: -(1 << 50)...(1 << 50))) { bytes in
            tally.record()
            let shown = ByteCount(bytes)
            let parsed = try ByteCount(parsing: shown.description)
            // One decimal of the unit shown: within half a tenth of it.
            let unit = ByteCount.units.first { bytes.magnitude >= UInt($0.scale) }?.scale ?? 1
            #expect(abs(parsed.bytes - bytes) <= unit / 20 + 1, "\(shown)")
        }
        #expect(tally.total == Self.count)
    }

    static let durationUnits: [(spelling: String, nanoseconds: Int128)] = [
        ("ns", 1), ("us", 1_000), ("µs", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000),
        ("m", 60_000_000_000), ("min", 60_000_000_000), ("h", 3_600_000_000_000),
    ]

    @Test func wellFormedDurationsParseToTheirValue() async throws {
        let tally = InputTally()
        let input = zip(
            Gen.int(in: 0...1_000_000), Gen.int(in: 0...3), Gen.int(in: 0...999),
            Gen.int(in: 0...(Self.durationUnits.count - 1)), Gen.int(in: 0...3)
        )
        await propertyCheck(count: Self.count, input: input) { whole, decimals, fraction, unit, style in
            tally.record()
            let digits = decimals == 0 ? "" : String(String(fraction).suffix(decimals))
            let (spelling, nanoseconds) = Self.durationUnits[unit]
            let text = "\(whole)" + (digits.isEmpty ? "" : ".\(digits)") + (style & 1 != 0 ? " " : "")
                + (style & 2 != 0 && spelling.allSatisfy(\.isASCII) ? spelling.uppercased() : spelling)
            let scaledDigits = Int128(whole) * Int128(Self.pow10(digits.count)) + Int128(digits.isEmpty ? 0 : Int(digits)!)
            let exact = (scaledDigits * nanoseconds * 2 + Int128(Self.pow10(digits.count))) / (2 * Int128(Self.pow10(digits.count)))
            let parsed = try DurationParser.parse(text)
            let parsedNanoseconds = Int128(parsed.components.seconds) * 1_000_000_000
                + Int128(parsed.components.attoseconds / 1_000_000_000)
            // Parsing goes through a Double: exact to its 52-bit precision.
            let tolerance = max(1, exact >> 50)
            #expect(abs(parsedNanoseconds - exact) <= tolerance, "\(text)")
        }
        #expect(tally.total == Self.count)
    }

    static func pow10(_ exponent: Int) -> Int {
        (0..<exponent).reduce(1) { result, _ in result * 10 }
    }
}
