@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryTestSupport
import Testing

/// Issue 18, item 11: text from a scenario file or a command line is printed escaped (no escape
/// sequence, no bidirectional override reaches the terminal) and, when echoed in an error, cut.
struct EchoedTextTests {
    @Test(arguments: [
        ("\u{1B}[31mred", #"\u{1B}[31mred"#),
        ("a\u{7F}b\u{85}c\u{9B}d", #"a\u{7F}b\u{85}c\u{9B}d"#),
        ("evil\u{202E}gnp.exe", #"evil\u{202E}gnp.exe"#),
        ("\u{200E}\u{200F}\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}\u{061C}",
         #"\u{200E}\u{200F}\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}\u{61C}"#),
        ("line\u{2028}break\u{2029}", #"line\u{2028}break\u{2029}"#),
        ("zero\u{200B}width\u{FEFF}", #"zero\u{200B}width\u{FEFF}"#),
        ("tab\there\nnewline", #"tab\u{9}here\u{A}newline"#),
        ("café, cafe\u{301}, 東京, 👩\u{200D}💻, ب\u{200C}ب", "café, cafe\u{301}, 東京, 👩\u{200D}💻, ب\u{200C}ب"),
    ])
    func controlFormatAndSeparatorCharactersAreEscapedAndTheRestKept(_ text: String, _ shown: String) {
        #expect(text.escapedForTerminal() == shown)
        #expect(printsSafelyOnATerminal(text.escapedForTerminal()))
    }

    @Test func escapedTextIsCutAtTheLimitWithAnEllipsis() {
        #expect("abcdef".escapedForTerminal(limit: 6) == "abcdef")
        #expect("abcdefg".escapedForTerminal(limit: 6) == "abcdef…")
        #expect("\u{1B}\u{1B}\u{1B}".escapedForTerminal(limit: 2) == #"\u{1B}\u{1B}…"#)
    }

    @Test func anEchoedValueIsQuotedAndEscaped() {
        #expect("plenty".echoed() == #""plenty""#)
        #expect("say \"hi\"\\".echoed() == #""say \"hi\"\\""#)
        #expect("\u{1B}]0;title\u{7}\u{202E}".echoed() == #""\u{1B}]0;title\u{07}\u{202E}""#)
    }

    @Test func aLongValueIsCutAndItsLengthGiven() {
        let value = String(repeating: "x", count: 1_000_000)
        let shown = value.echoed()
        #expect(shown == "\"" + String(repeating: "x", count: 80) + "\"… (1000000 bytes)")
        #expect("é".echoed(limit: 1) == #""é""#)
        #expect("éé".echoed(limit: 1) == #""é"… (4 bytes)"#)
        // A thousand combining marks are one Character: the limit counts scalars, so they are cut too.
        #expect(("a" + String(repeating: "\u{301}", count: 1000)).echoed().unicodeScalars.count < 100)
    }
}
