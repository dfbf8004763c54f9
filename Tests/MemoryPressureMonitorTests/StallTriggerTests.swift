@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
import SystemPackage
import Testing

struct StallTriggerTests {
    @Test func writesTheKernelsFormat() throws {
        #expect(StallTrigger.standard.description == "some 200000 2000000")
        #expect(try StallTrigger(.full, stall: .milliseconds(150), window: .seconds(1)).description == "full 150000 1000000")
    }

    @Test(arguments: [
        (Duration.milliseconds(100), Duration.milliseconds(400)),
        (.seconds(1), .seconds(11)),
        (.zero, .seconds(2)),
        (.seconds(3), .seconds(2)),
    ])
    func rejectsTriggersOutsideTheKernelsLimits(_ stall: Duration, _ window: Duration) {
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try StallTrigger(stall: stall, window: window)
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(
            error?.description == "stall trigger of \(stall) per \(window) window is out of range; expected a window from 500 ms to 10 s "
                + "(a multiple of 2 s for unprivileged processes) and a stall greater than zero and at most the window"
        )
    }

    @Test func targetsTheDefaultPathWithoutSystemd() throws {
        let target = try #require(StallWatch.target(for: .standard, environment: [:], defaultPath: "/proc/pressure/memory"))
        #expect(target.path == "/proc/pressure/memory")
        #expect(target.trigger == Array("some 200000 2000000".utf8) + [0])
    }

    @Test func honoursSystemdsWatchAndWrite() throws {
        // base64 of "full 100000 2000000".
        let environment = ["MEMORY_PRESSURE_WATCH": "/sys/fs/cgroup/app.service/memory.pressure",
                           "MEMORY_PRESSURE_WRITE": "ZnVsbCAxMDAwMDAgMjAwMDAwMA=="]
        let target = try #require(StallWatch.target(for: .standard, environment: environment, defaultPath: "/proc/pressure/memory"))
        #expect(target.path == "/sys/fs/cgroup/app.service/memory.pressure")
        #expect(target.trigger == Array("full 100000 2000000".utf8))
        #expect(StallWatch.target(for: .standard, environment: ["MEMORY_PRESSURE_WATCH": "/dev/null"], defaultPath: "/x") == nil)
        #expect(StallWatch.target(for: .standard, environment: ["MEMORY_PRESSURE_WATCH": "/x", "MEMORY_PRESSURE_WRITE": "%%"], defaultPath: "/y") == nil)
        #expect(StallWatch.target(for: .standard, environment: ["MEMORY_PRESSURE_WATCH": "/x"], defaultPath: "/y")?.trigger == nil)
    }

    @Test func armsOnTheRealFileOrSaysWhyNot() {
        let target = StallWatch.Target(path: PressureStall.systemPath, trigger: Array(StallTrigger.standard.description.utf8) + [0])
        do {
            let watch = try StallWatch(arming: target)
            #expect(watch.descriptor >= 0)
        } catch {
            // Without PSI or without permission the kernel refuses; the monitor then falls back.
            #expect([Errno.noSuchFileOrDirectory, .permissionDenied, .notPermitted, .invalidArgument].contains(error))
        }
    }

    @Test func refusedTriggerIsAnErrno() {
        // A window the kernel rejects (not a whole number of microseconds in range).
        let target = StallWatch.Target(path: PressureStall.systemPath, trigger: Array("some 1 99\0".utf8))
        #expect(throws: Errno.self) { _ = try StallWatch(arming: target) }
    }
}
