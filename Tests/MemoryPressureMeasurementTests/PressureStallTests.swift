@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
import SystemPackage
import Testing

struct PressureStallTests {
    @Test func parsesSomeAndFull() throws {
        let text = """
            some avg10=1.50 avg60=0.25 avg300=0.00 total=123456
            full avg10=0.75 avg60=0.10 avg300=0.00 total=6543
            """
        let stall = try #require(PressureStall.parse(text.utf8))
        #expect(stall.some == .init(average10: 1.5, average60: 0.25, average300: 0, totalMicroseconds: 123_456))
        #expect(stall.full == .init(average10: 0.75, average60: 0.1, average300: 0, totalMicroseconds: 6543))
    }

    @Test(arguments: [
        "",
        "some avg10=1.00 avg60=0.00 avg300=0.00 total=1",
        "some avg10=x avg60=0.00 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=1",
        "some avg10=101 avg60=0.00 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=1",
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=1",
        "other avg10=0.00\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=1",
    ])
    func rejectsMalformedText(_ text: String) {
        #expect(PressureStall.parse(text.utf8) == nil)
    }

    @Test func readsTheRealFileWhereTheKernelHasIt() throws {
        do {
            let stall = try PressureStall.read()
            #expect((0...100).contains(stall.some.average10))
            #expect(stall.some.totalMicroseconds >= stall.full.totalMicroseconds)
        } catch {
            // A kernel without CONFIG_PSI: the error says so, which is the behaviour under test.
            #expect(error.code == .measurementUnavailable)
            #expect(error.description.contains("/proc/pressure/memory"))
        }
    }

    @Test func missingFileIsReportedAsMissing() {
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try PressureStall.read(from: "/nonexistent/memory.pressure")
        }
        #expect(error?.code == .measurementUnavailable)
        #expect(error?.description == "/nonexistent/memory.pressure is not present")
    }
}
