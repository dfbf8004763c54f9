@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import SystemPackage
import Testing

struct KernelTextTests {
    @Test(arguments: [
        ("0", 0.0), ("100", 100.0), ("1.50", 1.5), ("0.29", 0.29), ("99.99", 99.99), ("12.345", 12.345),
    ])
    func decimalsAreTheDoublesTheirTextNames(_ text: String, _ value: Double) {
        #expect(KernelText.decimal(text.utf8) == value)
    }

    @Test(arguments: ["", ".5", "1.", "1.2.3", "-1", "1e2", "x", " 1"])
    func malformedDecimalsAreRejected(_ text: String) {
        #expect(KernelText.decimal(text.utf8) == nil)
    }

    @Test func unsignedIntegersUpToTheLargestAndNoFurther() {
        #expect(KernelText.unsigned("18446744073709551615".utf8) == UInt64.max)
        #expect(KernelText.unsigned("18446744073709551616".utf8) == nil)
        #expect(KernelText.unsigned("".utf8) == nil)
        #expect(KernelText.unsigned("12a".utf8) == nil)
    }

    @Test func linesAndFieldsSkipEmptyPiecesAndTrailingSpace() {
        var fields: [String] = []
        let accepted = KernelText.allLines(of: "a  b\n\nc \n".utf8) { line in
            KernelText.allFields(of: line) { fields.append(String(decoding: $0, as: UTF8.self)); return true }
        }
        #expect(accepted)
        #expect(fields == ["a", "b", "c"])
        #expect(String(decoding: KernelText.trimmed("4096 \n".utf8), as: UTF8.self) == "4096")
    }

    @Test func stallLinesMayCarryNamesTheParserDoesNotKnowButNotFieldsWithoutAValue() {
        let extra = "some avg10=1.00 avg60=0.00 avg300=0.00 total=1 new=7\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=1"
        #expect(PressureStall.parse(extra.utf8)?.some.average10 == 1)
        let bare = "some avg10=1.00 avg60 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=1"
        #expect(PressureStall.parse(bare.utf8) == nil)
    }

    @Test func eventsNeedAllFiveCountersAndTwoFieldsALine() {
        let complete = "low 1\nhigh 2\nmax 3\noom 4\noom_kill 5\nsock_throttled 6\n"
        #expect(ControlGroupEvents(parsing: complete.utf8) == ControlGroupEvents(low: 1, high: 2, max: 3, oom: 4, oomKill: 5))
        #expect(ControlGroupEvents(parsing: "low 1\nhigh 2\nmax 3\noom 4\n".utf8) == nil)
        #expect(ControlGroupEvents(parsing: "low 1 2\nhigh 2\nmax 3\noom 4\noom_kill 5\n".utf8) == nil)
    }
}

struct OpenKernelFileTests {
    @Test func eachReadingSeesTheFileAsItIsNow() throws {
        let directory = try TemporaryDirectory()
        try directory.write("memory.current", "4096\n")
        let file = try OpenKernelFile(directory.path.appending("memory.current"))
        #expect(try ControlGroup.currentBytes(from: file) == 4096)
        try directory.write("memory.current", "8192\n")
        #expect(try ControlGroup.currentBytes(from: file) == 8192)
    }

    @Test func aFileLongerThanTheBufferIsMalformedWithItsText() throws {
        let directory = try TemporaryDirectory()
        let long = String(repeating: "1", count: 40)
        try directory.write("memory.current", long)
        let file = try OpenKernelFile(directory.path.appending("memory.current"))
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try ControlGroup.currentBytes(from: file)
        }
        #expect(error?.code == .measurementFailed)
        #expect(error?.description == "\(directory.path.appending("memory.current")) is malformed: \(long.debugDescription)")
    }

    @Test func aMissingFileIsMissing() {
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try OpenKernelFile("/nonexistent/memory.events")
        }
        #expect(error?.code == .measurementUnavailable)
        #expect(error?.description == "/nonexistent/memory.events is not present")
    }
}
