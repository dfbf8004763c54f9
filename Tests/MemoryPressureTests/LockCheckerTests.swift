import Logging
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Synchronization
import Testing

/// The lock rule, checked by the code: a call-out (user code, a continuation, an event) reached
/// while a thread holds one of the library's locks traps in a debug build, which the test suite is.
struct LockCheckerTests {
    @Test func aCallOutUnderALibraryLockTraps() async {
        await #expect(processExitsWith: .failure) {
            let lock = LibraryLock(0)
            lock.withLock { value in
                callOut { value += 1 }
            }
        }
    }

    @Test func aCallOutUnderAThreadConditionTraps() async {
        await #expect(processExitsWith: .failure) {
            let condition = ThreadCondition()
            condition.withLock {
                callOut {}
            }
        }
    }

    @Test func loggingUnderALibraryLockTraps() async {
        await #expect(processExitsWith: .failure) {
            let logger = Logger(label: "checked") { _ in StreamLogHandler.standardError(label: "checked") }.callingOut
            let lock = LibraryLock(0)
            lock.withLock { _ in logger.error("under a lock") }
        }
    }

    @Test func aCallOutWithNoLockHeldRunsAndLocksNestedAndReleasedAreCounted() {
        let outer = LibraryLock(1)
        let inner = LibraryLock(2)
        let sum = outer.withLock { outer in
            inner.withLock { inner in outer + inner }
        }
        // Both released: the call-out runs, on this thread and after a lock that threw.
        #expect(callOut { sum } == 3)
        struct Failure: Error {}
        #expect(throws: Failure.self) { try outer.withLock { _ throws(Failure) in throw Failure() } }
        #expect(outer.withLockIfAvailable { $0 } == 1)
        #expect(callOut { true })
    }
}
