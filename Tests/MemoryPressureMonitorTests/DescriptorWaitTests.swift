#if canImport(Glibc)
import Glibc
#endif
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
import Testing

/// The sampling thread's wait, against real pipes: it reports what `poll` would, from one epoll set.
struct DescriptorWaitTests {
    @Test func reportsTheReadyDescriptorsWithPollsBitsAndNothingWhenTheTimePasses() throws {
        let first = try WakePipe()
        let second = try WakePipe()
        var wait = DescriptorWait([
            pollfd(fd: first.descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: second.descriptor, events: Int16(POLLIN), revents: 0),
        ])
        #expect(wait.wait(milliseconds: 0).isEmpty)

        second.wake()
        let ready = wait.wait(milliseconds: 1_000)
        #expect(ready.map(\.fd) == [second.descriptor])
        #expect(ready.first.map { $0.revents & Int16(POLLIN) != 0 } == true)
        // Level-triggered, as `poll` is: still ready until drained.
        #expect(wait.wait(milliseconds: 0).map(\.fd) == [second.descriptor])
        second.drain()

        first.wake()
        second.wake()
        #expect(Set(wait.wait(milliseconds: 1_000).map(\.fd)) == [first.descriptor, second.descriptor])
    }
}
