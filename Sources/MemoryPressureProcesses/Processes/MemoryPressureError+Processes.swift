import SystemPackage
import MemoryPressureRuntime

// The errors of child processes: their specifications, their start and the kernel calls that
// steer them. The factories sit beside the code that throws them.
//
// There is no code of their own yet: a specification the kernel refuses (a missing or
// non-executable file, a bad working directory) is ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidConfiguration``;
// a value out of range is ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidArgument``; a call on a child that has
// ended is ``/MemoryPressureRuntime/MemoryPressureError/Code/appNotRunning``; a kernel file or call that fails is
// ``/MemoryPressureRuntime/MemoryPressureError/Code/measurementFailed`` with its errno, except the calls that make what a
// child is started with (its process, its client channel), which are
// ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidConfiguration`` with their errno, as a start the kernel refuses.
extension MemoryPressureError {
    /// The specification's `field` (`executable`, `argument 2`, …) is unusable for `reason`.
    static func processSpecificationInvalid(_ field: String, _ reason: String) -> Self {
        Self(.invalidConfiguration, "process specification: \(field) \(reason)")
    }

    /// The executable `path` cannot be started: `reason` names what is wrong with it.
    static func processExecutableUnusable(_ path: String, _ reason: String, errno: Errno? = nil) -> Self {
        Self(
            .invalidConfiguration,
            "process specification: executable \(path.debugDescription) \(reason); expected an executable regular file, given as an absolute path, a path relative to the working directory, or a name found in PATH",
            errno: errno
        )
    }

    /// The child could not be started at `step` (`making its cgroup`, `fork`, …).
    static func processCouldNotStart(_ executable: String, step: String, errno: Errno) -> Self {
        Self(.invalidConfiguration, "process \(executable.debugDescription) could not be started: \(step) failed: \(errno)", errno: errno)
    }

    /// The socket pair of a child's client channel (``ClientChannel``) could not be made.
    static func clientChannelCouldNotBeMade(errno: Errno) -> Self {
        Self(.invalidConfiguration, "the client channel of a child process could not be made: socketpair failed: \(errno)", errno: errno)
    }

    /// An `oom_score_adj` value outside -1000 through 1000.
    static func oomScoreAdjustmentOutOfRange(_ value: Int) -> Self {
        Self(.invalidArgument, "oom_score_adj of \(value) is out of range; expected -1000 to 1000")
    }

    /// `operation` on the child `pid`, which has ended (and been reaped).
    static func childProcessEnded(pid: Int32, operation: String) -> Self {
        Self(.appNotRunning, "cannot \(operation) child process \(pid): it has ended")
    }

    /// The kernel refused `operation` on the child `pid`.
    static func childProcessControlFailed(pid: Int32, operation: String, errno: Errno) -> Self {
        Self(.measurementFailed, "cannot \(operation) child process \(pid): \(errno)", errno: errno)
    }

    /// The child `pid` was not frozen (or thawed) within `limit`.
    static func childProcessFreezeTimedOut(pid: Int32, operation: String, limit: Duration, state: String) -> Self {
        Self(.measurementFailed, "cannot \(operation) child process \(pid): still \(state.debugDescription) after \(limit)")
    }

    /// A per-child memory limit below ``ChildProcessOptions/smallestMemoryLimit``.
    static func childMemoryLimitOutOfRange(_ bytes: Int) -> Self {
        Self(.invalidConfiguration, "per-child memory limit of \(bytes) bytes is out of range; expected \(ChildProcessOptions.smallestMemoryLimit) bytes or more")
    }

    /// A per-child memory limit asked for where the child can have no memory cgroup, for `reason`.
    static func childMemoryLimitUnavailable(reason: String) -> Self {
        Self(.invalidConfiguration, "a per-child memory limit needs a memory cgroup of its own, and none can be made here: \(reason)")
    }

    /// Descriptors to hand to a child that are too many or not open.
    static func inheritedDescriptorsInvalid(_ descriptors: [Int32]) -> Self {
        Self(
            .invalidConfiguration,
            "inherited descriptors \(descriptors) are unusable; expected at most \(ChildProcessOptions.mostInheritedDescriptors) descriptors, each open in this process"
        )
    }

    /// A freezer asked for by name that this machine cannot offer, for `reason`.
    static func freezerUnavailable(_ mechanism: FreezeMechanism, reason: String) -> Self {
        Self(.invalidConfiguration, "the freezer \(mechanism) is not available here: \(reason)")
    }
}
