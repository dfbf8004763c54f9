import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// SIGINT, SIGTERM and SIGHUP during a run: the first asks the run to stop (it then removes its
/// temporary state, writes no outputs and exits with 128 + the signal's number); a second exits at
/// once, with 128 + its number.
enum Interruption {
    /// The first signal received, or 0.
    private static let received = Atomic<Int32>(0)

    static let signals = [SIGINT, SIGTERM, SIGHUP]

    /// Installs the handlers.
    static func install() {
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                // Async-signal-safe: a lock-free exchange, and _exit.
                let (exchanged, _) = Interruption.received.compareExchange(expected: 0, desired: number, ordering: .sequentiallyConsistent)
                if !exchanged { _exit(128 + number) }
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
    }

    /// The first signal received, if any.
    static var signal: Int32? {
        let number = received.load(ordering: .sequentiallyConsistent)
        return number == 0 ? nil : number
    }

    /// Runs `operation`, cancelling it when a signal arrives (checked every 20 ms).
    static func cancelling<Result: Sendable>(_ operation: @escaping @Sendable () async throws -> Result) async throws -> Result {
        let task = Task { try await operation() }
        let watcher = Task {
            while !Task.isCancelled {
                if signal != nil {
                    task.cancel()
                    return
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        defer { watcher.cancel() }
        return try await task.value
    }

    /// The signal's name: `SIGINT`, `SIGTERM`, `SIGHUP`.
    static func name(_ number: Int32) -> String {
        switch number {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(number)"
        }
    }
}
