#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import SystemPackage
import MemoryPressureRuntime

/// A small shell that outlives this process to end the children it left: those the kernel's
/// parent-death signal cannot end, frozen by the v1 freezer (they wait for a thaw, `SIGKILL`
/// pending), and any member of this process's child cgroups.
///
/// It reads a pipe whose write end only this process holds (close-on-exec, so no other child
/// inherits it). When this process ends, however it ends, the kernel closes that end and the
/// guardian reads end-of-file: it thaws every `memory-pressure-child-PID-*` cgroup of this
/// process under the given parents, kills their members (`cgroup.kill` where the kernel has it),
/// and removes them, retrying for up to 2 s while members die. Dismissed (``dismiss()``), it reads
/// `exit` first and ends without touching anything. It runs outside every child cgroup, in a
/// process group of its own, so that neither a freeze nor a signal to the host's group reaches it.
final class ChildGuardian: Sendable {
    private let process: ChildProcess
    /// The pipe's write end, which only this process holds.
    private let writeEnd: Int32

    /// The guardian's script: `$1` is the host's pid, the rest the parent directories.
    static let script = """
        exec 0<&3 3<&-
        while read -r line; do [ "$line" = exit ] && exit 0; done
        host=$1; shift
        sweep() {
          for parent in "$@"; do
            for group in "$parent"/memory-pressure-child-"$host"-*; do
              [ -d "$group" ] || continue
              [ -f "$group/freezer.state" ] && echo THAWED > "$group/freezer.state"
              [ -f "$group/cgroup.freeze" ] && echo 0 > "$group/cgroup.freeze"
              [ -f "$group/cgroup.kill" ] && echo 1 > "$group/cgroup.kill"
              for member in $(cat "$group/cgroup.procs"); do kill -9 "$member"; done
              rmdir "$group" || left=1
            done
          done
        }
        tries=0
        while :; do
          left=0
          sweep "$@" 2>/dev/null
          [ "$left" = 0 ] && exit 0
          tries=$((tries + 1))
          [ "$tries" -ge 100 ] && exit 1
          sleep 0.02
        done
        """

    /// Starts a guardian of this process's child cgroups under `parents`.
    init(parents: [FilePath], logger: Logger) throws(MemoryPressureError) {
        var ends: (Int32, Int32) = (-1, -1)
        guard withUnsafeMutableBytes(of: &ends, { pipe($0.baseAddress!.assumingMemoryBound(to: Int32.self)) }) == 0 else {
            throw .processCouldNotStart("/bin/sh", step: "making the guardian's pipe", errno: Errno(rawValue: errno))
        }
        guard fcntl(ends.0, F_SETFD, FD_CLOEXEC) == 0, fcntl(ends.1, F_SETFD, FD_CLOEXEC) == 0 else {
            let failure = Errno(rawValue: errno)
            close(ends.0)
            close(ends.1)
            throw .processCouldNotStart("/bin/sh", step: "making the guardian's pipe close-on-exec", errno: failure)
        }
        defer { close(ends.0) }
        let specification = ProcessSpecification(
            executable: "/bin/sh", arguments: ["-c", Self.script, "memory-pressure-guardian", "\(getpid())"] + parents.map(\.string)
        )
        do {
            process = try ChildProcess.spawn(
                specification,
                options: ChildProcessOptions(freezeMechanism: .stopSignal, usesMemoryControlGroup: false, inheritedDescriptors: [ends.0]),
                logger: logger
            )
        } catch {
            close(ends.1)
            throw error
        }
        writeEnd = ends.1
    }

    /// Tells the guardian that this process ends in order, and reaps it.
    func dismiss() {
        var text = "exit\n"
        _ = text.withUTF8 { write(writeEnd, $0.baseAddress, $0.count) }
        close(writeEnd)
        if process.waitForExit(timeout: .seconds(1)) == nil {
            _ = process.kill(timeout: .seconds(1))
        }
    }
}
