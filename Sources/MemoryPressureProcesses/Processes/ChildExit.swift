#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How a child process ended, as `waitid` reported it when it was reaped.
package enum ChildExit: Hashable, Sendable, CustomStringConvertible {
    /// It called `exit` (or returned from `main`) with `status`.
    case exited(status: Int32)
    /// A signal ended it; `coreDumped` when it left a core.
    case signaled(Int32, coreDumped: Bool)
    /// Someone else in this process reaped it first (a `waitpid(-1, …)` elsewhere, or `SIGCHLD`
    /// set to `SIG_IGN`): it has ended, how is unknown.
    case reapedElsewhere

    /// Whether `SIGKILL` ended it: ours (``ChildProcess/kill(timeout:)``), the kernel's OOM killer
    /// or anyone else's.
    package var isKill: Bool {
        if case .signaled(SIGKILL, _) = self { return true }
        return false
    }

    package var description: String {
        switch self {
        case .exited(let status): "exited with status \(status)"
        case .signaled(let signal, let coreDumped): "killed by signal \(signal)\(coreDumped ? " (core dumped)" : "")"
        case .reapedElsewhere: "reaped elsewhere in the process (status unknown)"
        }
    }
}

/// What is known of a child process once it has been reaped: how it ended, whether we killed it,
/// and what its memory cgroup saw, so that a later layer can tell the kernel's OOM kill from ours
/// and from a crash.
package struct ChildTermination: Hashable, Sendable, CustomStringConvertible {
    /// How it ended.
    package var exit: ChildExit
    /// Whether ``ChildProcess/kill(timeout:)`` sent it `SIGKILL`.
    package var killedByUs: Bool
    /// Whether `process_mrelease` reaped its memory ahead of its exit (after our kill).
    package var memoryReleasedEarly: Bool
    /// The `oom_kill` count of its own memory cgroup when it was reaped (v2 `memory.events`, v1
    /// `memory.oom_control`); nil where it had no memory cgroup of its own.
    package var controlGroupOOMKills: Int?

    package init(exit: ChildExit, killedByUs: Bool, memoryReleasedEarly: Bool, controlGroupOOMKills: Int?) {
        self.exit = exit
        self.killedByUs = killedByUs
        self.memoryReleasedEarly = memoryReleasedEarly
        self.controlGroupOOMKills = controlGroupOOMKills
    }

    /// Whether the kernel's OOM killer ended it: `SIGKILL` that we did not send, in a cgroup whose
    /// `oom_kill` count rose; nil where that cannot be told (no cgroup of its own: a `SIGKILL` we did
    /// not send may be the OOM killer's or anyone's).
    package var wasKilledByKernelOOMKiller: Bool? {
        guard exit.isKill, !killedByUs else { return false }
        guard let controlGroupOOMKills else { return nil }
        return controlGroupOOMKills > 0
    }

    package var description: String {
        var text = exit.description
        if killedByUs { text += ", by us" }
        if memoryReleasedEarly { text += ", memory released early" }
        if let controlGroupOOMKills, controlGroupOOMKills > 0 { text += ", cgroup oom_kill \(controlGroupOOMKills)" }
        return text
    }
}
