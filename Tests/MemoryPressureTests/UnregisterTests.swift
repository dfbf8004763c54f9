import Foundation
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureLifecycle
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// `MemorySystem.unregister(_:)`: an app that is not running leaves the system, its identifier can
/// be registered again, and the old app object accepts nothing more; misuse is refused with the
/// app left as it was.
@Suite struct UnregisterTests {
    @Test func anAppThatIsNotRunningCanBeRegisteredAgainUnderItsName() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 64 * mebibyte, logger: silentLogger))
        let old = try system.register(.test("editor")) { IdleDelegate() }
        try await old.launch()
        try await old.terminate(reason: .explicit)

        try system.unregister(.test("editor"))
        #expect(system.app(.test("editor")) == nil)
        #expect(!system.apps.contains { $0 === old })

        let new = try system.register(.test("editor")) { IdleDelegate() }
        #expect(system.app(.test("editor")) === new)
        #expect(try await new.launch() == .active)
        // The old object is out of the system for good: a launch is refused, with the reason.
        let error = await #expect(throws: MemoryPressureError.self) { try await old.launch() }
        #expect(error?.code == .invalidTransition)
        #expect(error?.description.contains("unregistered") == true, "\(String(describing: error))")
        #expect(old.state == .notRunning)
        _ = await system.shutDown()
    }

    @Test func aRunningOrSuspendedAppIsNotUnregistered() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 64 * mebibyte, logger: silentLogger))
        let app = try system.register(.test("tool")) { IdleDelegate() }
        try await app.launch()
        let running = #expect(throws: MemoryPressureError.self) { try system.unregister(.test("tool")) }
        #expect(running?.code == .invalidTransition)
        #expect(running?.description.contains("accepted states: notRunning") == true, "\(String(describing: running))")
        #expect(try await app.enterBackground() == .suspended)
        #expect(throws: MemoryPressureError.self) { try system.unregister(.test("tool")) }
        // Refused, and nothing changed: the app is still the system's, and it comes back.
        #expect(system.app(.test("tool")) === app)
        #expect(try await app.enterForeground() == .active)
        _ = await system.shutDown()
    }

    @Test func anUnknownIdentifierIsRefusedByName() throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 64 * mebibyte, logger: silentLogger))
        let error = #expect(throws: MemoryPressureError.self) { try system.unregister(.test("nobody")) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.description.contains("no app named") == true, "\(String(describing: error))")
        // Twice is the second an unknown identifier.
        _ = try system.register(.test("once")) { IdleDelegate() }
        try system.unregister(.test("once"))
        #expect(throws: MemoryPressureError.self) { try system.unregister(.test("once")) }
    }

    @Test func aProcessAppIsRegisteredAgainWithAnotherCommand() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 64 * mebibyte, logger: silentLogger))
        // A long launch deadline: a first child under ThreadSanitizer, beside the whole suite, took
        // more than the default 5 s to start in CI, and its launch was ended. And long sleeps: on a
        // loaded machine under the sanitizer, a `sleep 30` ended before the test read its pid.
        let slowStart = try AppConfiguration(launchDeadline: .seconds(60))
        let first = try system.register(
            .test("worker"), process: ProcessSpecification(executable: "/bin/sleep", arguments: ["300"]), configuration: slowStart
        )
        try await first.launch()
        let firstPid = try #require(system.process(of: .test("worker"))?.pid)
        try await first.terminate(reason: .explicit)
        try system.unregister(.test("worker"))

        let second = try system.register(
            .test("worker"), process: ProcessSpecification(executable: "/bin/sleep", arguments: ["301"]), configuration: slowStart
        )
        try await second.launch()
        let secondPid = try #require(system.process(of: .test("worker"))?.pid)
        #expect(secondPid != firstPid)
        #expect(try String(contentsOfFile: "/proc/\(secondPid)/cmdline", encoding: .utf8).contains("301"))
        _ = await system.shutDown()
    }
}
