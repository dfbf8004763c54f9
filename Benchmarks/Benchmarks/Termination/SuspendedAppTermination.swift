import BenchmarkSupport
import MemoryPressure
import Synchronization

/// A suspended app whose delegate holds its ballast in the app's own heap, terminated.
enum SuspendedAppTermination {
    /// Nanoseconds from `terminate(reason:)` until the termination record has come and statm shows
    /// the process's resident bytes down by at least 90 % of `appBytes`.
    static func nanosecondsToTerminate(appBytes: Int) async throws -> Int {
        let system = try MemorySystem(configuration: .benchmark(targetBytes: 8 << 30))
        // The system is not run: nothing but the benchmark terminates the app.
        let failure = FailureNote()
        let registry = system.registry
        let app = try system.register(try AppIdentifier("ballast")) {
            Ballast(registry: registry, bytes: appBytes, failure: failure)
        }
        try await app.launch()
        try await app.enterBackground()
        while app.state != .suspended {
            try await Task.sleep(for: .milliseconds(1))
        }
        if let failure = failure.message.withLock({ $0 }) { throw TerminationBenchmarkError(failure) }
        guard system.footprint(of: app.identifier).totalBytes >= appBytes else {
            throw TerminationBenchmarkError("the app holds \(system.footprint(of: app.identifier).totalBytes) bytes, not \(appBytes)")
        }

        let events = system.events.stream()
        let before = try ProcessMemory.current().residentBytes
        let clock = ContinuousClock()
        let start = clock.now
        try await app.terminate(reason: .explicit)
        for await event in events {
            if case .termination(let record) = event, record.app == app.identifier { break }
        }
        while try before - ProcessMemory.current().residentBytes < appBytes * 9 / 10 {
            guard clock.now - start < .seconds(10) else {
                throw TerminationBenchmarkError("the process's resident bytes did not fall by the app's 256 MiB")
            }
        }
        let elapsed = clock.now - start
        return Int(elapsed / .nanoseconds(1))
    }

    /// Fills its app's heap with `bytes` of ballast on launch, every page written, and holds it
    /// until the app is terminated.
    final class Ballast: AppDelegate {
        let registry: PurgeRegistry
        let bytes: Int
        let failure: FailureNote
        private var ballast: [HeapBuffer] = []

        init(registry: PurgeRegistry, bytes: Int, failure: FailureNote) {
            self.registry = registry
            self.bytes = bytes
            self.failure = failure
        }

        func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
            do {
                let heap = try registry.heap(for: app.identifier)
                ballast = try (0..<bytes / mebibyte).map { _ in
                    let buffer = try heap.allocate(byteCount: mebibyte)
                    buffer.withUnsafeMutableBytes(touchEveryPage)
                    return buffer
                }
            } catch {
                failure.message.withLock { $0 = "ballast for \(app.identifier): \(error)" }
            }
        }
    }
}

/// What went wrong where it cannot be thrown (in an app's callback).
final class FailureNote: Sendable {
    let message = Mutex<String?>(nil)
}

/// A termination that did not measure what the benchmark is about.
struct TerminationBenchmarkError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
