import MemoryPressure
import MemoryPressureTestKit
import Testing

/// A tenant's code, with state and no lock of its own: only code isolated to its app touches it.
private final class CountingTenant: AppDelegate {
    var handled: [Int] = []
    var notified = 0

    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        app.notificationCenter.addObserver(forName: "ping") { app, _ in
            // An observer reaches the delegate with the same isolation.
            app.delegate(as: CountingTenant.self)?.notified += 1
        }
    }

    func handle(_ request: Int) -> Int {
        handled.append(request)
        return handled.count
    }
}

/// Work sent to an app: run on its run loop, isolated to it, in order, with its delegate.
@Suite struct AppWorkTests {
    @Test func workSentToAnAppRunsIsolatedToItInOrderAndReachesItsDelegate() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33))
        let tenant = try system.register(.test("tenant")) { CountingTenant() }
        try await tenant.launch()

        // Eight senders at once, 125 requests each; each sender's requests in its order.
        let senders = 8
        let requests = 125
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sender in 0..<senders {
                group.addTask {
                    for index in 0..<requests {
                        let request = sender * 1_000 + index
                        let count = try await tenant.perform { app in
                            app.delegate(as: CountingTenant.self)?.handle(request) ?? 0
                        }
                        #expect(count >= index + 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        for _ in 0..<3 { tenant.notificationCenter.post(name: "ping") }
        let (handled, notified) = try await tenant.perform { app in
            let delegate = app.delegate(as: CountingTenant.self)
            return (delegate?.handled ?? [], delegate?.notified ?? 0)
        }
        #expect(handled.count == senders * requests)
        for sender in 0..<senders {
            #expect(handled.filter { $0 / 1_000 == sender } == (0..<requests).map { sender * 1_000 + $0 })
        }
        #expect(notified == 3)
        // Another type is not the delegate.
        #expect(try await tenant.perform { app in app.delegate(as: RecordingDelegate.self) == nil })
    }

    @Test func workSentToASuspendedOrTerminatedAppIsRefusedAndDoesNotRun() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33))
        let tenant = try system.register(.test("sleeper"), configuration: .patient()) { CountingTenant() }
        try await tenant.launch()
        #expect(try await tenant.enterBackground() == .suspended)
        let ran = SharedBox(false)
        do {
            _ = try await tenant.perform { _ in ran.value = true }
            Issue.record("work ran in a suspended app")
        } catch let error as MemoryPressureError {
            #expect(error.code == .appNotRunning)
            #expect("\(error)".contains("bring it to the foreground or launch it first"))
        }
        #expect(tenant.state == .suspended)
        // Back in the foreground, it runs.
        try await tenant.enterForeground()
        #expect(try await tenant.perform { app in app.state } == .active)
        try await tenant.terminate(reason: .explicit)
        await #expect(throws: MemoryPressureError.self) { try await tenant.perform { _ in ran.value = true } }
        #expect(!ran.value)
        // Errors the work throws reach the caller.
        try await tenant.launch()
        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await tenant.perform { _ in throw Refused() } }
    }
}
