#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CProcessSpawn
import Logging
import Synchronization
import SystemPackage
import MemoryPressureRuntime
import MemoryPressureMeasurement

/// A child process started for a process app, and the kernel's levers on it: its pidfd, its
/// cgroups, its freezer, `oom_score_adj`, signals and the kill.
///
/// ## Which mechanism, where, and why
///
/// - **Starting it: `clone3` and `execve`, not `posix_spawn` nor swift-subprocess.** A child must be
///   in its own memory and freezer cgroups before it runs any code of its own, or what it allocates
///   first is charged to the host and a freeze could miss a process it forked. `posix_spawn` has no
///   step between the fork and the exec, and `clone3`'s `CLONE_INTO_CGROUP` places a child only in
///   a cgroup v2 directory, not in the v1 memory and freezer hierarchies. swift-subprocess spawns
///   through `posix_spawn` too, and is not a dependency of this package. So a small C function
///   (`CProcessSpawn`) calls `clone3` with `CLONE_PIDFD` (the pidfd is made with the child, with
///   no window in which the pid could be reused), and the child, a copy of the calling thread alone,
///   does only async-signal-safe steps: reset ignored signals and the mask, write `0` to each open
///   `cgroup.procs` (which moves the writer, in v1 and v2 alike), `setpgid(0, 0)`, `chdir`, place
///   the descriptors it inherits at 3, 4, … and mark all others close-on-exec, `execve`. A failed step is reported through a close-on-exec pipe with its errno, and the
///   child is reaped before the error is thrown. Where `clone3` is refused (kernels before 5.3, or
///   seccomp filters that answer `ENOSYS`), a plain `clone` with fork's semantics and `pidfd_open`
///   take its place.
/// - **Its own process group**, so that the `SIGSTOP` fallback stops what it forked too.
/// - **Exit without a thread per child**: the pidfd polls readable when the child exits;
///   `waitid(P_PIDFD, …, WNOHANG)` reaps it (``pollExit()``), and ``waitForExit(timeout:)`` polls
///   the pidfd with a timeout. A system loop can put every child's pidfd in its one `poll`.
/// - **Freezing** (``FreezeMechanism``), decided once per process and logged once: cgroup v2
///   `cgroup.freeze` in a child directory of the process's cgroup2 directory (also the
///   controller-less cgroup2 tree of a hybrid host), waited on until `cgroup.events` reads
///   `frozen 1`; else the v1 freezer, `freezer.state` = `FROZEN`, waited on until it reads `FROZEN`;
///   else `SIGSTOP`/`SIGCONT` to the process group, waited on until the child's state is `T` (or
///   `D`, from which it can only go to the stop: see ``runsNoUserCode(_:)``). A
///   test or a caller can ask for one (``ChildProcessOptions/freezeMechanism``).
/// - **Memory** (``ChildMemoryMechanism``): where the process may make a child memory cgroup (v2
///   with `memory` in its `cgroup.subtree_control`, or a v1 memory hierarchy it can write), the
///   child's own cgroup's working set (v2 `memory.current` − `inactive_file`, v1
///   `memory.usage_in_bytes` − `total_inactive_file`); elsewhere `/proc/PID/statm`'s RSS, corrected
///   every ``ChildProcessOptions/proportionalSetInterval`` by PSS from `/proc/PID/smaps_rollup`
///   (about 730 µs a read), plus the resident sets of its descendants (``ProcessTree``), which a
///   cgroup would have counted. The child's own files are opened once and read into a stack buffer.
/// - **The kill**: `SIGKILL` through `pidfd_send_signal` (never a recycled pid) and to its process
///   group (what it started, where no cgroup would catch it), a v1-frozen child
///   thawed so that it can die, then `process_mrelease` (Linux 5.15) so that its memory comes back
///   without waiting for its exit path; `ENOSYS` is logged once and the kill goes on without it.
/// - **Cleanup**: its cgroups are removed as soon as it is reaped (members it left behind are
///   killed first). Dropping the last reference to a child that still runs kills and reaps it, so
///   no zombie and no cgroup outlives its ``ChildProcess``.
///
/// ## Concurrency
/// One `Mutex` guards the child's state (reaped or not, frozen, killed by us). Everything that
/// addresses the child by pid (`oom_score_adj`, the process group's signals, reaping) is done under
/// it, so that nothing is sent to a pid that was reaped and reused; those are system calls, never
/// user code. Waits (for the freezer, for the exit, for its cgroups to empty) and logging happen
/// outside it.
package final class ChildProcess: Sendable {
    /// The child's process id (and process group id).
    package let pid: Int32
    /// What was started.
    package let specification: ValidatedProcessSpecification
    /// How this child is frozen.
    package let freezeMechanism: FreezeMechanism
    /// How this child's footprint is measured.
    package var memoryMechanism: ChildMemoryMechanism { memory.mechanism }
    /// The child's cgroup directories (memory, then freezer; one on a pure v2 host); empty where it
    /// has none.
    package var controlGroupDirectories: [FilePath] { controlGroups?.directories ?? [] }
    /// Whether the child was made with `clone3` (false: the plain `clone` fallback).
    package let madeWithClone3: Bool

    /// The pidfd, or -1 on a kernel without pidfds (before 5.3): then signals go by pid, under the
    /// lock, while the child is known not to be reaped.
    private let pidfd: Int32
    private let controlGroups: ChildControlGroups?
    private let memory: ChildMemoryReader
    private let logger: Logger
    private let state = LibraryLock(State())

    private struct State {
        var termination: ChildTermination?
        var frozen = false
        var killedByUs = false
        var memoryReleasedEarly = false
    }

    private init(
        pid: Int32,
        pidfd: Int32,
        specification: ValidatedProcessSpecification,
        freezeMechanism: FreezeMechanism,
        controlGroups: ChildControlGroups?,
        memory: ChildMemoryReader,
        madeWithClone3: Bool,
        logger: Logger
    ) {
        self.pid = pid
        self.pidfd = pidfd
        self.specification = specification
        self.freezeMechanism = freezeMechanism
        self.controlGroups = controlGroups
        self.memory = memory
        self.madeWithClone3 = madeWithClone3
        self.logger = logger
    }

    // MARK: Starting

    /// Validates `specification`, makes the child's cgroups, and starts it in them, in its own
    /// process group. Returns once it has exec'd. A bad specification, or a start the kernel refuses,
    /// throws and leaves no process and no cgroup behind.
    ///
    /// Made through `spawner`, the child dies with the spawner's thread, and so with this process
    /// however it ends (see ``ChildSpawner``); made without one, on the calling thread, it may
    /// outlive this process.
    package static func spawn(
        _ specification: ProcessSpecification,
        options: ChildProcessOptions = ChildProcessOptions(),
        through spawner: ChildSpawner? = nil,
        logger: Logger = Logger(label: "MemoryPressure.ChildProcess")
    ) throws(MemoryPressureError) -> ChildProcess {
        let validated = try specification.validated()
        let parents = ChildControlGroupParents.current
        reportMechanismsOnce(parents, logger: logger)

        let freezeMechanism = options.freezeMechanism ?? parents.automaticFreezeMechanism
        let freezerParent: FilePath?
        switch freezeMechanism {
        case .controlGroupV2:
            guard let parent = parents.freezerV2 else {
                throw .freezerUnavailable(freezeMechanism, reason: parents.freezerV2Reason ?? "unknown")
            }
            freezerParent = parent
        case .controlGroupV1:
            guard let parent = parents.freezerV1 else {
                throw .freezerUnavailable(freezeMechanism, reason: parents.freezerV1Reason ?? "unknown")
            }
            freezerParent = parent
        case .stopSignal:
            freezerParent = nil
        }
        guard options.inheritedDescriptors.count <= ChildProcessOptions.mostInheritedDescriptors,
              options.inheritedDescriptors.allSatisfy({ fcntl($0, F_GETFD) >= 0 })
        else {
            throw .inheritedDescriptorsInvalid(options.inheritedDescriptors)
        }
        let memoryParent = options.usesMemoryControlGroup ? parents.memory : nil
        if let limit = options.memoryLimitBytes {
            guard limit >= ChildProcessOptions.smallestMemoryLimit else { throw .childMemoryLimitOutOfRange(limit) }
            guard memoryParent != nil else {
                throw .childMemoryLimitUnavailable(
                    reason: options.usesMemoryControlGroup ? parents.memoryReason ?? "unknown" : "the options ask for no memory cgroup"
                )
            }
        }
        let executable = validated.specification.executable
        let groups: ChildControlGroups? =
            memoryParent == nil && freezerParent == nil
            ? nil
            : try ChildControlGroups(
                memoryParent: memoryParent,
                freezerParent: freezerParent,
                memoryLimitBytes: options.memoryLimitBytes,
                executable: executable
            )

        var result = mp_spawn_result()
        do {
            let processLists = try groups?.openProcessLists(executable: executable) ?? []
            defer { processLists.forEach { close($0) } }
            withCStringArray(validated.argumentVector) { argv in
                withCStringArray(validated.environmentVector) { envp in
                    let directory = validated.specification.workingDirectory?.string
                    processLists.withUnsafeBufferPointer { lists in
                        options.inheritedDescriptors.withUnsafeBufferPointer { inherited in
                            func spawn(in directory: UnsafePointer<CChar>?) {
                                func spawnHere(parentDeathSignal: Int32) {
                                    mp_spawn(
                                        validated.executablePath, argv, envp, directory,
                                        lists.baseAddress, Int32(lists.count),
                                        inherited.baseAddress, Int32(inherited.count),
                                        parentDeathSignal, options.triesClone3 ? 1 : 0,
                                        &result
                                    )
                                }
                                guard let spawner else { return spawnHere(parentDeathSignal: 0) }
                                // Every parent this process may use: a later child may be frozen another way.
                                let guarded = [parents.memory?.directory, parents.freezerV2, parents.freezerV1].compactMap(\.self)
                                spawner.run(guarding: guarded) { spawnHere(parentDeathSignal: SIGKILL) }
                            }
                            if let directory { directory.withCString { spawn(in: $0) } } else { spawn(in: nil) }
                        }
                    }
                }
            }
        } catch {
            _ = groups?.removeAfterReaping()
            throw error
        }
        guard result.stage == Int32(mp_spawn_stage_none.rawValue), result.pid > 0 else {
            _ = groups?.removeAfterReaping()
            throw spawnError(result, executable: executable)
        }

        let memory: ChildMemoryReader
        do {
            memory = try ChildMemoryReader(
                pid: result.pid,
                memoryGroup: groups?.memory,
                correctionInterval: options.proportionalSetInterval
            )
        } catch {
            // Its /proc or cgroup files cannot be opened: end it rather than run it unmeasured.
            if result.pidfd >= 0 { _ = mp_pidfd_send_signal(result.pidfd, SIGKILL) } else { _ = signalByPid(result.pid, SIGKILL) }
            var status: Int32 = 0
            _ = mp_reap_child(result.pidfd, result.pid, 1, &status)
            if result.pidfd >= 0 { close(result.pidfd) }
            _ = groups?.removeAfterReaping()
            throw error
        }
        return ChildProcess(
            pid: result.pid,
            pidfd: result.pidfd,
            specification: validated,
            freezeMechanism: freezeMechanism,
            controlGroups: groups,
            memory: memory,
            madeWithClone3: result.used_clone3 != 0,
            logger: logger
        )
    }

    /// The error for a spawn that failed at `result.stage`.
    private static func spawnError(_ result: mp_spawn_result, executable: String) -> MemoryPressureError {
        let errno = Errno(rawValue: result.error)
        switch mp_spawn_stage(rawValue: UInt32(result.stage)) {
        case mp_spawn_stage_exec:
            switch errno {
            case .noSuchFileOrDirectory: return .processExecutableUnusable(executable, "does not exist (or its interpreter does not)", errno: errno)
            case .permissionDenied: return .processExecutableUnusable(executable, "is not executable", errno: errno)
            case .execFormatError: return .processExecutableUnusable(executable, "is not in a format the kernel can run", errno: errno)
            default: return .processCouldNotStart(executable, step: "execve", errno: errno)
            }
        case mp_spawn_stage_pipe: return .processCouldNotStart(executable, step: "making the report pipe", errno: errno)
        case mp_spawn_stage_fork: return .processCouldNotStart(executable, step: "clone", errno: errno)
        case mp_spawn_stage_cgroup: return .processCouldNotStart(executable, step: "joining its cgroups", errno: errno)
        case mp_spawn_stage_process_group: return .processCouldNotStart(executable, step: "setpgid", errno: errno)
        case mp_spawn_stage_directory: return .processCouldNotStart(executable, step: "changing to its working directory", errno: errno)
        case mp_spawn_stage_descriptors: return .processCouldNotStart(executable, step: "placing its inherited descriptors", errno: errno)
        case mp_spawn_stage_parent_death: return .processCouldNotStart(executable, step: "asking for its parent-death signal", errno: errno)
        default: return .processCouldNotStart(executable, step: "spawn", errno: errno)
        }
    }

    private static let mechanismsReported = Atomic<Bool>(false)
    private static let memoryReleaseMissingReported = Atomic<Bool>(false)

    /// Logs, once per process, how children are frozen and measured here, and why not better.
    private static func reportMechanismsOnce(_ parents: ChildControlGroupParents, logger: Logger) {
        guard !mechanismsReported.exchange(true, ordering: .relaxed) else { return }
        var metadata: Logger.Metadata = [
            "freezer": "\(parents.automaticFreezeMechanism)",
            "memory": "\(parents.memoryMechanism)",
        ]
        if let reason = parents.freezerV2Reason { metadata["freezer_v2_unavailable"] = "\(reason)" }
        if let reason = parents.freezerV1Reason { metadata["freezer_v1_unavailable"] = "\(reason)" }
        if let reason = parents.memoryReason { metadata["memory_cgroup_unavailable"] = "\(reason)" }
        logger.notice(
            "child processes are frozen by \(parents.automaticFreezeMechanism) and measured by \(parents.memoryMechanism)",
            metadata: metadata
        )
        let (removed, emptied) = (parents.leftovers.removed, parents.leftovers.emptied)
        if !removed.isEmpty || !emptied.isEmpty {
            let held = emptied.isEmpty ? "" : "; \(emptied.count) still held processes, which were thawed and killed"
            logger.warning(
                "swept \(removed.count + emptied.count) child cgroups left by processes no longer alive\(held)",
                metadata: ["removed": "\(removed.map(\.string))", "emptied": "\(emptied.map(\.string))"]
            )
        }
    }

    // MARK: Exit

    /// How the child ended, reaping it if it has ended since the last look; nil while it runs.
    /// Never blocks (beyond removing its cgroups once it has ended).
    package func pollExit() -> ChildTermination? {
        reap()
    }

    /// Waits at most `timeout` for the child to end, and reaps it; nil when it still runs then. Blocks
    /// the calling thread in `poll` on the pidfd.
    package func waitForExit(timeout: Duration) -> ChildTermination? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let termination = reap() { return termination }
            let remaining = WakePipe.milliseconds(until: deadline)
            guard remaining > 0 else { return nil }
            if pidfd >= 0 {
                _ = mp_poll_one(pidfd, Int16(POLLIN), remaining)
            } else {
                _ = mp_poll_one(-1, 0, min(remaining, 10))
            }
        }
    }

    /// The pidfd, for a system loop to `poll` (readable once the child has exited); nil on a kernel
    /// without pidfds. Valid while this object lives.
    package var exitDescriptor: Int32? { pidfd >= 0 ? pidfd : nil }

    /// Reaps the child if it has ended; under the lock, so exactly one caller reaps it. That caller
    /// then removes the child's cgroups, with the lock released: removing them waits (up to 2 s)
    /// for the members the child left behind to die, and the child's other users (its state, a
    /// kill) must not wait behind that.
    private func reap() -> ChildTermination? {
        let (termination, reapedNow): (ChildTermination?, Bool) = state.withLock { state in
            if let termination = state.termination { return (termination, false) }
            var status: Int32 = 0
            let outcome = mp_reap_child(pidfd, pid, 0, &status)
            let exit: ChildExit
            switch outcome {
            case Int32(mp_child_exited.rawValue): exit = .exited(status: status)
            case Int32(mp_child_killed.rawValue): exit = .signaled(status, coreDumped: false)
            case Int32(mp_child_dumped.rawValue): exit = .signaled(status, coreDumped: true)
            case -ECHILD: exit = .reapedElsewhere
            default: return (nil, false)
            }
            let termination = ChildTermination(
                exit: exit,
                killedByUs: state.killedByUs,
                memoryReleasedEarly: state.memoryReleasedEarly,
                controlGroupOOMKills: controlGroups?.oomKillCount()
            )
            state.termination = termination
            state.frozen = false
            return (termination, true)
        }
        if reapedNow {
            for (directory, errno) in controlGroups?.removeAfterReaping() ?? [] {
                logger.warning("cannot remove the cgroup of an ended child process", metadata: ["pid": "\(pid)", "cgroup": "\(directory)", "errno": "\(errno)"])
            }
        }
        return termination
    }

    /// Runs `body` under the lock while the child has not been reaped, so that its pid is still
    /// ours; throws ``/MemoryPressureRuntime/MemoryPressureError/Code/appNotRunning`` once it has been.
    private func whileNotReaped<Value>(
        _ operation: String,
        _ body: (inout State) throws(MemoryPressureError) -> Value
    ) throws(MemoryPressureError) -> Value {
        try state.withLock { (state) throws(MemoryPressureError) -> Value in
            guard state.termination == nil else { throw .childProcessEnded(pid: pid, operation: operation) }
            return try body(&state)
        }
    }

    // MARK: Signals and the kill

    /// Sends `signal` to the child through its pidfd.
    package func signal(_ signal: Int32) throws(MemoryPressureError) {
        try whileNotReaped("signal") { _ throws(MemoryPressureError) in
            try sendSignal(signal)
        }
    }

    private func sendSignal(_ signal: Int32) throws(MemoryPressureError) {
        let result = pidfd >= 0 ? mp_pidfd_send_signal(pidfd, signal) : signalByPid(pid, signal)
        guard result == 0 else {
            throw .childProcessControlFailed(pid: pid, operation: "send signal \(signal) to", errno: Errno(rawValue: -result))
        }
    }

    /// Kills the child: `SIGKILL` through its pidfd and to its process group, a thaw where the v1 freezer holds it (a task
    /// frozen there cannot die), `process_mrelease` so that its memory comes back now, then waits at
    /// most `timeout` for it to be reaped. Returns its termination, or nil when it was not reaped in
    /// time. A child that has already ended is not signalled; its termination is returned.
    @discardableResult
    package func kill(timeout: Duration = .seconds(5)) -> ChildTermination? {
        let sent: Bool = state.withLock { state in
            guard state.termination == nil else { return false }
            guard (try? sendSignal(SIGKILL)) != nil else { return false }
            // What it started in its process group goes too (where it has no cgroup, nothing else
            // would end them); its pid, unreaped, still holds the group's id.
            killpg(pid, SIGKILL)
            state.killedByUs = true
            return true
        }
        if sent {
            if freezeMechanism == .controlGroupV1, let freezer = controlGroups?.freezer {
                _ = try? KernelFile.write("THAWED", to: freezer.appending("freezer.state"))
            }
            if pidfd >= 0 {
                let released = mp_process_mrelease(pidfd)
                if released == 0 {
                    state.withLock { $0.memoryReleasedEarly = true }
                } else if released == -ENOSYS, !Self.memoryReleaseMissingReported.exchange(true, ordering: .relaxed) {
                    logger.notice("process_mrelease is not available (Linux 5.15 and later): a killed child's memory comes back on its exit path")
                }
            }
        }
        return waitForExit(timeout: timeout)
    }

    // MARK: Page-out

    /// Pages the child's private anonymous memory out to swap (see ``ProcessPageOut``), frozen or
    /// not; returns the bytes advised. Not under the child's lock: the pidfd names this child
    /// until it is released, reaped or not, and a large page-out takes a while (about 0.5 s for
    /// 200 MiB to zram).
    ///
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with
    ///   ``/MemoryPressureRuntime/MemoryPressureError/Code/measurementUnavailable`` on a kernel
    ///   without pidfds or `process_madvise`, or without the permission.
    package func pageOut() throws(MemoryPressureError) -> Int {
        guard pidfd >= 0 else { throw .pageOutUnavailable(.noFunction) }
        return try ProcessPageOut.pageOut(pid: pid, pidfd: pidfd)
    }

    // MARK: oom_score_adj

    /// The accepted `oom_score_adj` values: -1000 (never chosen) to 1000 (chosen first).
    package static let oomScoreAdjustmentRange = -1000...1000

    /// Writes `/proc/PID/oom_score_adj`. Lowering it below what the child inherited takes
    /// `CAP_SYS_RESOURCE`.
    package func setOOMScoreAdjustment(_ value: Int) throws(MemoryPressureError) {
        guard Self.oomScoreAdjustmentRange.contains(value) else { throw .oomScoreAdjustmentOutOfRange(value) }
        try whileNotReaped("set oom_score_adj of") { _ throws(MemoryPressureError) in
            do throws(Errno) {
                try KernelFile.write("\(value)", to: oomScoreAdjustmentPath)
            } catch {
                throw .childProcessControlFailed(pid: pid, operation: "set oom_score_adj to \(value) for", errno: error)
            }
        }
    }

    /// Reads `/proc/PID/oom_score_adj`.
    package func oomScoreAdjustment() throws(MemoryPressureError) -> Int {
        try whileNotReaped("read oom_score_adj of") { _ throws(MemoryPressureError) in
            try KernelFile.parse(oomScoreAdjustmentPath) { Int($0) }
        }
    }

    private var oomScoreAdjustmentPath: FilePath { FilePath("/proc/\(pid)/oom_score_adj") }

    // MARK: Freezing

    /// Whether the child is frozen (by ``freeze(timeout:)``, until ``thaw(timeout:)``).
    package var isFrozen: Bool { state.withLock { $0.frozen } }

    /// Freezes the child by ``freezeMechanism`` and waits, at most `timeout`, until the kernel says it
    /// is frozen (or, for the stop signal, until it is stopped).
    package func freeze(timeout: Duration = .seconds(5)) throws(MemoryPressureError) {
        try changeFreezing(to: true, timeout: timeout)
    }

    /// Thaws the child and waits, at most `timeout`, until the kernel says it runs again.
    package func thaw(timeout: Duration = .seconds(5)) throws(MemoryPressureError) {
        try changeFreezing(to: false, timeout: timeout)
    }

    private func changeFreezing(to frozen: Bool, timeout: Duration) throws(MemoryPressureError) {
        let operation = frozen ? "freeze" : "thaw"
        let deadline = ContinuousClock.now + timeout
        switch freezeMechanism {
        case .controlGroupV2, .controlGroupV1:
            guard let directory = controlGroups?.freezer else { throw .childProcessEnded(pid: pid, operation: operation) }
            let isVersion2 = freezeMechanism == .controlGroupV2
            let control = directory.appending(isVersion2 ? "cgroup.freeze" : "freezer.state")
            try whileNotReaped(operation) { _ throws(MemoryPressureError) in
                do throws(Errno) {
                    try KernelFile.write(isVersion2 ? (frozen ? "1" : "0") : (frozen ? "FROZEN" : "THAWED"), to: control)
                } catch {
                    throw .childProcessControlFailed(pid: pid, operation: operation, errno: error)
                }
            }
            // v2 reports it in cgroup.events ("frozen 1"); v1 reads FREEZING until every task is frozen.
            let statePath = directory.appending(isVersion2 ? "cgroup.events" : "freezer.state")
            let wanted = isVersion2 ? (frozen ? "frozen 1" : "frozen 0") : (frozen ? "FROZEN" : "THAWED")
            var last = ""
            var attempt = 0
            while true {
                last = (try? KernelFile.read(statePath)) ?? ""
                let reached = isVersion2 ? last.split(separator: "\n").contains(Substring(wanted)) : last.hasPrefix(wanted)
                if reached { break }
                guard ContinuousClock.now < deadline else {
                    throw .childProcessFreezeTimedOut(pid: pid, operation: operation, limit: timeout, state: last)
                }
                attempt += 1
                // The v1 freezer stays FREEZING when a task could not be frozen in the pass the
                // write made (one in an uninterruptible wait, or just forked); writing FROZEN again
                // makes another pass, as the kernel's documentation says.
                if !isVersion2, frozen, attempt % 10 == 0 {
                    _ = try? KernelFile.write("FROZEN", to: control)
                }
                _ = mp_poll_one(-1, 0, 1)
            }
        case .stopSignal:
            try whileNotReaped(operation) { _ throws(MemoryPressureError) in
                guard killpg(pid, frozen ? SIGSTOP : SIGCONT) == 0 else {
                    throw .childProcessControlFailed(pid: pid, operation: operation, errno: Errno(rawValue: errno))
                }
            }
            while true {
                guard let processState = try? processState() else { break }  // reaped meanwhile
                // Thawed once it is out of the stop (a `D` then is an ordinary wait of a running child).
                if frozen ? Self.runsNoUserCode(processState) : (processState != "T" && processState != "t") { break }
                guard ContinuousClock.now < deadline else {
                    throw .childProcessFreezeTimedOut(pid: pid, operation: operation, limit: timeout, state: String(processState))
                }
                _ = mp_poll_one(-1, 0, 1)
            }
        }
        state.withLock { $0.frozen = frozen }
    }

    /// Whether a process in `state`, with `SIGSTOP` sent to it, runs no more code of its own:
    /// stopped (`T`, or `t` under a tracer), or in an uninterruptible wait (`D`), from which it goes
    /// straight to the stop before returning to user space. A shell that `vfork`ed a child stopped
    /// before its exec waits in `D` until the `SIGCONT` (dash does this).
    static func runsNoUserCode(_ state: Character) -> Bool {
        state == "T" || state == "t" || state == "D"
    }

    /// The child's state letter from `/proc/PID/stat` (`R`, `S`, `D`, `T`, `Z`, …).
    package func processState() throws(MemoryPressureError) -> Character {
        try whileNotReaped("read the state of") { _ throws(MemoryPressureError) in
            try KernelFile.parse(FilePath("/proc/\(pid)/stat")) { text in
                // "pid (comm) S …": the state follows the last parenthesis (a name may hold one).
                guard let close = text.lastIndex(of: ")") else { return nil }
                return text[close...].dropFirst().first { $0 != " " }
            }
        }
    }

    // MARK: Memory

    /// The child's footprint by ``memoryMechanism``.
    package func footprint() throws(MemoryPressureError) -> ChildFootprint {
        try memory.footprint()
    }

    /// The child's resident set from `/proc/PID/statm`, whatever ``memoryMechanism`` is.
    package func residentSetBytes() throws(MemoryPressureError) -> Int {
        try memory.residentSetBytes()
    }

    deinit {
        // A child still running when its last reference goes: kill it and reap it, so that neither
        // a zombie nor its cgroups outlive it.
        if pollExit() == nil {
            kill(timeout: .seconds(5))
            if state.withLock({ $0.termination == nil }) {
                var status: Int32 = 0
                _ = mp_reap_child(pidfd, pid, 1, &status)
                _ = controlGroups?.removeAfterReaping()
            }
        }
        if pidfd >= 0 { close(pidfd) }
    }
}

/// How a child is started: which freezer, whether it gets a memory cgroup, how often PSS corrects
/// its resident set.
package struct ChildProcessOptions: Hashable, Sendable {
    /// The freezer to use, or nil for this machine's best (``ChildControlGroupParents/automaticFreezeMechanism``).
    /// One the machine cannot offer makes the spawn throw.
    package var freezeMechanism: FreezeMechanism?
    /// Whether the child gets its own memory cgroup where one can be made (false: measured by statm).
    package var usesMemoryControlGroup: Bool
    /// How often PSS from `smaps_rollup` corrects the resident set, where there is no memory cgroup.
    package var proportionalSetInterval: Duration
    /// A hard limit the kernel enforces on the child's own memory cgroup (v2 `memory.max`; v1
    /// `memory.limit_in_bytes` and, where present, `memory.memsw.limit_in_bytes`): past it the
    /// kernel's OOM killer ends the child, and its termination says so. At least
    /// ``smallestMemoryLimit``; needs a memory cgroup of its own (the spawn throws where there is none).
    package var memoryLimitBytes: Int?

    /// Open descriptors of this process that the child gets as its 3, 4, … (for example one end of
    /// a Unix socket for the client channel). Every other descriptor from 3 up is closed at the exec
    /// (Linux 5.11's `close_range`), whatever its flags; 0, 1 and 2 are the host's. At most
    /// ``mostInheritedDescriptors``.
    package var inheritedDescriptors: [Int32]

    /// The most ``inheritedDescriptors`` accepted: 64.
    package static let mostInheritedDescriptors = 64

    /// Whether the child is made with `clone3` where the kernel allows it (false: the fallback, a
    /// plain `clone` and `pidfd_open`, which kernels before 5.3 and some seccomp filters get; for tests).
    package var triesClone3 = true

    /// The smallest ``memoryLimitBytes`` accepted: 1 MiB.
    package static let smallestMemoryLimit = 1 << 20

    package init(
        freezeMechanism: FreezeMechanism? = nil,
        usesMemoryControlGroup: Bool = true,
        proportionalSetInterval: Duration = .seconds(10),
        memoryLimitBytes: Int? = nil,
        inheritedDescriptors: [Int32] = []
    ) {
        self.inheritedDescriptors = inheritedDescriptors
        self.freezeMechanism = freezeMechanism
        self.usesMemoryControlGroup = usesMemoryControlGroup
        self.proportionalSetInterval = proportionalSetInterval
        self.memoryLimitBytes = memoryLimitBytes
    }
}

/// `kill(pid, signal)`, for kernels without pidfds: 0 or -errno.
private func signalByPid(_ pid: Int32, _ signal: Int32) -> Int32 {
    kill(pid, signal) == 0 ? 0 : -errno
}

/// Runs `body` with a NULL-terminated array of C strings copied from `strings`.
private func withCStringArray<Result>(
    _ strings: [String],
    _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Result
) -> Result {
    let pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
