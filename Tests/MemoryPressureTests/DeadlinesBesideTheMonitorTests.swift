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
    /// Waits, off the cooperative pool, for `semaphore`.
    static func wait(for semaphore: DispatchSemaphore) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                semaphore.wait()
                continuation.resume()
            }
        }
    }

    /// Registers an app whose `didEnterBackground` waits for `gate`, and sends it to the
    /// background: its deadline ends it. Returns the state and reason its transition saw.
    static func overrunBackgroundDeadline(in system: MemorySystem, gate: DispatchSemaphore) async throws -> (AppState, TerminationReason?) {
        let app = try system.register(.test("overruns"), configuration: .quick) {
            let delegate = RecordingDelegate()
            delegate.onDidEnterBackground = { _ in gate.wait() }
            return delegate
        }
        try await app.launch()
        let state = try await app.enterBackground()
        return (state, app.terminationReason)
    }

    @Test func aMonitorObserverThatBlocksHoldsUpNoAppDeadline() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33, logger: silentLogger))
        let blocked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let observerReturned = Atomic<Bool>(false)
        let first = Atomic<Bool>(true)
        let token = system.monitor.events.observe { _ in
            guard first.exchange(false, ordering: .relaxed) else { return }
            blocked.signal()
            _ = release.wait(timeout: .now() + .seconds(Int(generousDeadline.components.seconds)))
            observerReturned.store(true, ordering: .relaxed)
        }
        let running = Task { try await system.run() }
        await Self.wait(for: blocked)

        let gate = DispatchSemaphore(value: 0)
        let (state, reason) = try await Self.overrunBackgroundDeadline(in: system, gate: gate)
        #expect(state == .notRunning)
        #expect(reason == .deadline)
        // The deadline ended the app while the monitor's thread was still in the observer.
        let returnedFirst = observerReturned.load(ordering: .relaxed)
        #expect(!returnedFirst)

        release.signal()
        gate.signal()
        running.cancel()
        _ = try? await running.value
        token.cancel()
    }

    @Test func aSampleSourceThatBlocksHoldsUpNoAppDeadline() async throws {
        let blocked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let source = BlockingSampleSource(blocked: blocked, release: release)
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33, logger: silentLogger)
        configuration.monitor.sources.append(source)
        let system = try MemorySystem(configuration: configuration)
        let running = Task { try await system.run() }
        await Self.wait(for: blocked)

        let gate = DispatchSemaphore(value: 0)
        let (state, reason) = try await Self.overrunBackgroundDeadline(in: system, gate: gate)
        #expect(state == .notRunning)
        #expect(reason == .deadline)
        let returnedFirst = source.hasReturned
        #expect(!returnedFirst)

        release.signal()
        gate.signal()
        running.cancel()
        _ = try? await running.value
    }
}

/// A service's own sample source whose first reading blocks until released.
final class BlockingSampleSource: MemorySampleSource {
    let blocked: DispatchSemaphore
    let release: DispatchSemaphore
    private let returned = Atomic<Bool>(false)
    private let first = Atomic<Bool>(true)

    init(blocked: DispatchSemaphore, release: DispatchSemaphore) {
        self.blocked = blocked
        self.release = release
    }

    /// Whether the blocked reading has returned.
    var hasReturned: Bool { returned.load(ordering: .relaxed) }

    var name: String { "blocking" }
    var depth: SampleDepth { .cheap }

    func read(into sample: inout MemorySample) throws {
        guard first.exchange(false, ordering: .relaxed) else { return }
        blocked.signal()
        _ = release.wait(timeout: .now() + .seconds(Int(generousDeadline.components.seconds)))
        returned.store(true, ordering: .relaxed)
    }
}
