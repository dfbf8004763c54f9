#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MemoryPressureLifecycle

/// How a process app's process ended, as its termination record reports it.
///
/// Encodable as an object: `{"exited": {"status": 0}}`, `{"signaled": {"signal": 9,
/// "coreDumped": false, "byKernelOOMKiller": true, "bySystem": false}}` or `{"unknown": {}}`.
///
/// This enumeration grows as the library does (new events, reasons and steps come with new
/// capabilities): a `switch` over it needs a `default` or `@unknown default` case, so that a
/// newer version of the library does not break it. See “Types That Grow” in the MemoryPressure documentation.
public enum ProcessExit: Hashable, Sendable, Encodable, CustomStringConvertible {
    /// It exited with `status`.
    case exited(status: Int32)
    /// `signal` ended it. `bySystem` when the system sent it (its kill at a termination);
    /// `byKernelOOMKiller` when the kernel's OOM killer did, as its own memory cgroup's `oom_kill`
    /// count tells (nil where it had no cgroup of its own, so that cannot be told).
    case signaled(signal: Int32, coreDumped: Bool, bySystem: Bool, byKernelOOMKiller: Bool?)
    /// It ended, but how is unknown: something else in the process reaped it first.
    case unknown

    /// What `termination` shows.
    package init(_ termination: ChildTermination) {
        switch termination.exit {
        case .exited(let status):
            self = .exited(status: status)
        case .signaled(let signal, let coreDumped):
            self = .signaled(
                signal: signal, coreDumped: coreDumped, bySystem: termination.killedByUs,
                byKernelOOMKiller: termination.wasKilledByKernelOOMKiller
            )
        case .reapedElsewhere:
            self = .unknown
        }
    }

    /// The termination reason of a process that ended by itself this way.
    package var reason: TerminationReason {
        if case .exited = self { return .processExited }
        return .processKilled
    }

    /// In words: `exited with status 3`, `killed by signal 9 (the kernel's OOM killer)`.
    public var description: String {
        switch self {
        case .exited(let status):
            return "exited with status \(status)"
        case .signaled(let signal, let coreDumped, let bySystem, let byKernelOOMKiller):
            var text = "killed by signal \(signal)"
            if coreDumped { text += " (core dumped)" }
            if bySystem { text += " (sent by the system)" }
            if byKernelOOMKiller == true { text += " (the kernel's OOM killer)" }
            return text
        case .unknown:
            return "ended, reaped elsewhere (status unknown)"
        }
    }
}
