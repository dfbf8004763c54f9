@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import SystemPackage
import Testing

struct MemoryPressureErrorTests {
    @Test func everyCodeHasADistinctDescription() {
        let codes = MemoryPressureError.Code.all
        #expect(codes.count == 21)
        #expect(Set(codes.map(\.description)).count == codes.count)
        #expect(Set(codes).count == codes.count)
        #expect(MemoryPressureError.Code.invalidBudget.description == "invalidBudget")
    }

    @Test func errorsWithTheSameCodeAndMessageAreEqual() {
        let first = MemoryPressureError.duplicateApp(.test("twice"))
        let second = MemoryPressureError.duplicateApp(.test("twice"))
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(Set([first, second]).count == 1)
        // Only the code and the message are compared.
        let withErrno = MemoryPressureError(.stateNotSaved, "the same message", errno: .noSpace)
        let withoutErrno = MemoryPressureError(.stateNotSaved, "the same message")
        #expect(withErrno == withoutErrno)
        #expect(withErrno.hashValue == withoutErrno.hashValue)
    }

    @Test func errorsCompareByCodeNotByMessage() {
        // The code is what a program handles; the message names the values given.
        #expect(MemoryPressureError.duplicateApp(.test("one")) == .duplicateApp(.test("other")))
        #expect(MemoryPressureError.duplicateApp(.test("one")).hashValue == MemoryPressureError.duplicateApp(.test("other")).hashValue)
        #expect(MemoryPressureError(.stateNotSaved, "message") != MemoryPressureError(.stateNotRestored, "message"))
    }

    @Test func aSampleSourceOfYourOwnThrowsTheCodesItsContractNames() {
        #expect(MemoryPressureError.measurementUnavailable("no GPU here").code == .measurementUnavailable)
        #expect(MemoryPressureError.measurementFailed("busy").code == .measurementFailed)
        #expect("\(MemoryPressureError.measurementUnavailable("no GPU here"))" == "no GPU here")
    }
}
