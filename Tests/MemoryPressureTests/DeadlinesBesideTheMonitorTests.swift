import Dispatch
import MemoryPressure
import MemoryPressureTestKit
import Synchronization
import Testing

/// Why the apps' deadlines keep a thread of their own beside the monitor's loop. Issue 23 asked for
/// one loop to own sampling and every deadline; but the monitor's thread runs a service's code (its
/// observers of `monitor.events`, and its own `MemorySampleSource`s), and a deadline is what ends
/// an app whose code does not return. On the monitor's loop, that code would hold every deadline of
/// the system with it. These tests keep the monitor's thread blocked in the service's code and
/// require an app's deadline to end the app meanwhile: an order of events, not a time.
@Suite(.timeLimit(.minutes(5)))
struct DeadlinesBesideTheMonitorTests {
    /// Runs `system`, waits until `hold` holds its monitor's thread, and requires an app that
    /// overruns its `didEnterBackground` deadline to be ended by it before the hold is let go.
    static func expectADeadlineEndsAnApp(in system: MemorySystem, whileHeldBy hold: MonitorThreadHold) async throws {
        let running = Task { try await system.run() }
        await hold.waitUntilHeld()

        let gate = DispatchSemaphore(value: 0)
        let app = try system.register(.test("overruns"), configuration: .quick) {
            let delegate = RecordingDelegate()
            delegate.onDidEnterBackground = { _ in gate.wait() }
            return delegate
        }
        try await app.launch()
        #expect(try await app.enterBackground() == .notRunning)
        #expect(app.terminationReason == .deadline)
        // The deadline ended the app while the monitor's thread was still in the service's code.
        let returnedFirst = hold.hasReturned
        #expect(!returnedFirst)

        hold.letGo()
        gate.signal()
        running.cancel()
        _ = try? await running.value
    }

    @Test func aMonitorObserverThatBlocksHoldsUpNoAppDeadline() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33, logger: silentLogger))
        let hold = MonitorThreadHold()
        let token = system.monitor.events.observe { _ in hold.holdTheFirstTime() }
        try await Self.expectADeadlineEndsAnApp(in: system, whileHeldBy: hold)
        token.cancel()
    }

    @Test func aSampleSourceThatBlocksHoldsUpNoAppDeadline() async throws {
        let hold = MonitorThreadHold()
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33, logger: silentLogger)
        configuration.monitor.sources.append(HoldingSampleSource(hold: hold))
        try await Self.expectADeadlineEndsAnApp(in: try MemorySystem(configuration: configuration), whileHeldBy: hold)
    }
}

/// Holds the thread that calls it the first time, until let go (or `generousDeadline` passes).
final class MonitorThreadHold: Sendable {
    private let held = DispatchSemaphore(value: 0)
    private let release = DispatchSemaphore(value: 0)
    private let first = Atomic<Bool>(true)
    private let returned = Atomic<Bool>(false)

    func holdTheFirstTime() {
        guard first.exchange(false, ordering: .relaxed) else { return }
        held.signal()
        _ = release.wait(timeout: .now() + .seconds(Int(generousDeadline.components.seconds)))
        returned.store(true, ordering: .relaxed)
    }

    /// Returns once a thread is held, waiting off the cooperative pool.
    func waitUntilHeld() async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                self.held.wait()
                continuation.resume()
            }
        }
    }

    func letGo() {
        release.signal()
    }

    /// Whether the held thread has returned.
    var hasReturned: Bool { returned.load(ordering: .relaxed) }
}

/// A service's own sample source whose first reading is held.
struct HoldingSampleSource: MemorySampleSource {
    let hold: MonitorThreadHold

    var name: String { "holding" }
    var depth: SampleDepth { .cheap }

    func read(into sample: inout MemorySample) throws {
        hold.holdTheFirstTime()
    }
}
