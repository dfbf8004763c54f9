import BenchmarkSupport
import MemoryPressure
import MemoryPressureTestKit

/// A suspended app whose delegate holds its ballast in the app's own heap, terminated.
enum SuspendedAppTermination {
    /// Nanoseconds from `terminate(reason:)` until the termination record has come and statm shows
    /// the process's resident bytes down by at least 90 % of `appBytes`.
    static func nanosecondsToTerminate(appBytes: Int) async throws -> Int {
        let system = try MemorySystem(configuration: .benchmark(targetBytes: 8 << 30))
        // The system is not run: nothing but the benchmark terminates the app.
        let failure = SharedBox<String?>(nil)
        // Unowned: the system holds the app, which holds this closure.
        let app = try system.register(try AppIdentifier("ballast")) { [unowned system] in
            BallastDelegate(bytes: appBytes, heap: system.heap(for:), onFailure: { failure.value = $0 })
        }
        try await app.launch()
        try await app.enterBackground()
        while app.state != .suspended {
            try await Task.sleep(for: .milliseconds(1))
        }
        if let failure = failure.value { throw BenchmarkFailure(failure) }
        guard system.footprint(of: app.identifier).totalBytes >= appBytes else {
            throw BenchmarkFailure("the app holds \(system.footprint(of: app.identifier).totalBytes) bytes, not \(appBytes)")
        }

        let events = system.events.stream()
        let before = try residentBytes()
        let clock = ContinuousClock()
        let start = clock.now
        try await app.terminate(reason: .explicit)
        for await event in events {
            if case .termination(let record) = event, record.app == app.identifier { break }
        }
        while try before - residentBytes() < appBytes * 9 / 10 {
            guard clock.now - start < .seconds(10) else {
                throw BenchmarkFailure("the process's resident bytes did not fall by the app's 256 MiB")
            }
        }
        return (clock.now - start).wholeNanoseconds
    }
}
