@testable import MemoryPressureRuntime
import Testing

struct ByteCountParsingTests {
    @Test(arguments: [
        ("512MiB", 512 << 20), ("2GiB", 2 << 30), ("1.5G", 3 << 29), ("800000000", 800_000_000),
        ("64k", 64 << 10), ("4 KiB", 4096), ("1MB", 1_000_000), ("2gb", 2_000_000_000), ("17B", 17),
        ("  3T ", 3 << 40), ("0.5KiB", 512), ("-1GiB", -(1 << 30)), ("0.1284MB", 128_400),
        ("2.0", 2), ("7.000B", 7), ("1.9MiB", 1_992_294),
    ])
    func parsesSizes(_ text: String, _ bytes: Int) throws {
        #expect(try ByteCount(parsing: text).bytes == bytes)
    }

    /// Issue 18, item 11: `--budget 1.9` was read as 1 byte. A fraction of a byte is most likely a
    /// unit left out, so it is refused; a fraction of a larger unit is rounded down to whole bytes.
    @Test(arguments: ["1.9", "1.5B", "-0.5", "0.001 b"])
    func refusesAFractionOfAByte(_ text: String) {
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try ByteCount(parsing: text)
        }
        #expect(error?.code == .unparsableValue)
        #expect(error?.description == "size \(text.debugDescription) is not a whole number of bytes; expected \(ByteCount.parsingForm)")
    }

    @Test(arguments: ["", "abc", "GiB", "12XB", "1.2.3G", "1.G", ".5G", "1e9", "99999999999T", "--1", "5 5"])
    func rejectsMalformedSizesSayingWhatIsAccepted(_ text: String) {
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try ByteCount(parsing: text)
        }
        #expect(error?.code == .unparsableValue)
        #expect(error?.description == "size \(text.debugDescription) is not valid; expected \(ByteCount.parsingForm)")
        #expect(error?.description.contains("512MiB") == true)
    }
}

struct DurationParserTests {
    @Test(arguments: [
        ("500ms", Duration.milliseconds(500)), ("2s", .seconds(2)), ("1.5m", .seconds(90)),
        ("250us", .microseconds(250)), ("1h", .seconds(3600)), ("10 ns", .nanoseconds(10)),
        ("0s", .zero), ("2min", .seconds(120)), ("0.25s", .milliseconds(250)),
    ])
    func parsesDurations(_ text: String, _ duration: Duration) throws {
        #expect(try DurationParser.parse(text) == duration)
    }

    @Test(arguments: ["", "5", "ms", "-1s", "1.5.2s", "2 days", "1e3ms", ".5s", "3s4"])
    func rejectsMalformedDurationsSayingWhatIsAccepted(_ text: String) {
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try DurationParser.parse(text)
        }
        #expect(error?.code == .unparsableValue)
        #expect(error?.description == "duration \(text.debugDescription) is not valid; expected \(DurationParser.form)")
        #expect(error?.description.contains("500ms") == true)
    }
}
