#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import SystemPackage
import MemoryPressureRuntime
import MemoryPressureMeasurement

/// How a child process is frozen while its app is suspended.
///
/// This enumeration grows as the library does (new events, reasons and steps come with new
/// capabilities): a `switch` over it needs a `default` or `@unknown default` case, so that a
/// newer version of the library does not break it. See “Types That Grow” in the MemoryPressure documentation.
public enum FreezeMechanism: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Its own cgroup v2 directory's `cgroup.freeze` (Linux 5.2), waited on until `cgroup.events`
    /// reads `frozen 1`. Also on a hybrid host's controller-less cgroup2 tree.
    case controlGroupV2 = "cgroup v2 cgroup.freeze"
    /// Its own directory of the v1 freezer hierarchy: `freezer.state` = `FROZEN`, waited on until it
    /// reads `FROZEN`.
    case controlGroupV1 = "cgroup v1 freezer.state"
    /// `SIGSTOP` and `SIGCONT` to its process group, where no freezer cgroup can be made. The child
    /// can see it (a parent's `waitpid` with `WUNTRACED`, a `SIGCONT` handler), and anyone may send
    /// `SIGCONT`; the freezers are invisible to it.
    case stopSignal = "SIGSTOP to its process group"

    /// The mechanism in words, such as `cgroup v2 cgroup.freeze`.
    public var description: String { rawValue }
}

/// How a child process's memory is measured.
package enum ChildMemoryMechanism: String, Hashable, Sendable, CustomStringConvertible {
    /// Its own cgroup v2 directory: `memory.current` less `memory.stat`'s `inactive_file`.
    case controlGroupV2 = "cgroup v2 working set"
    /// Its own directory of the v1 memory hierarchy: `memory.usage_in_bytes` less `memory.stat`'s
    /// `total_inactive_file`.
    case controlGroupV1 = "cgroup v1 working set"
    /// `/proc/PID/statm`'s resident set, corrected at a slow cadence by `/proc/PID/smaps_rollup`'s PSS.
    case residentSet = "statm RSS corrected by PSS"

    package var description: String { rawValue }
}

/// Where this process may make cgroups for its children: found once per process, by making (and
/// removing) a probe directory under each candidate parent.
package struct ChildControlGroupParents: Hashable, Sendable {
    /// A parent directory and its cgroup version.
    package struct Parent: Hashable, Sendable {
        package var directory: FilePath
        package var isVersion2: Bool
    }

    /// Where children's memory cgroups go: the process's own cgroup v2 directory when its
    /// `cgroup.subtree_control` enables `memory`, else its v1 memory cgroup, when a child directory
    /// can be made there; nil elsewhere (see ``memoryReason``).
    package var memory: Parent?
    /// Where children's freezer cgroups go: the process's own cgroup2 directory (v2 or hybrid) when a
    /// child made there has `cgroup.freeze`, else its v1 freezer cgroup, when a child directory can be
    /// made there; nil elsewhere (see ``freezerReason``).
    package var freezerV2: FilePath?
    package var freezerV1: FilePath?
    /// Why there is no memory parent, for the log.
    package var memoryReason: String?
    /// Why a freezer is missing, for the log.
    package var freezerV2Reason: String?
    package var freezerV1Reason: String?
    /// The cgroups that processes no longer alive left for their children, found with the
    /// parents: removed when empty, or emptied (their members thawed and killed) and removed.
    package var leftovers = Leftovers()
    /// Cgroups that processes no longer alive left.
    package struct Leftovers: Hashable, Sendable {
        /// Empty, removed at once.
        package var removed: [FilePath] = []
        /// Holding processes (a frozen child, perhaps), emptied, then removed.
        package var emptied: [FilePath] = []
    }

    /// The freezer used when none is asked for: v2, else v1, else the stop signal.
    package var automaticFreezeMechanism: FreezeMechanism {
        if freezerV2 != nil { return .controlGroupV2 }
        if freezerV1 != nil { return .controlGroupV1 }
        return .stopSignal
    }

    /// The memory figure used for children.
    package var memoryMechanism: ChildMemoryMechanism {
        guard let memory else { return .residentSet }
        return memory.isVersion2 ? .controlGroupV2 : .controlGroupV1
    }

    /// The parents of the calling process, found on first use and kept.
    package static var current: ChildControlGroupParents { discovered }

    private static let discovered = discover()

    /// Finds the parents from `/proc/self/cgroup` and `/proc/self/mountinfo`, and probes each.
    static func discover() -> ChildControlGroupParents {
        var parents = ChildControlGroupParents()
        guard let membership = try? KernelFile.read(ControlGroupDiscovery.membershipPath),
              let mountInfo = try? KernelFile.read(ControlGroupDiscovery.mountInfoPath)
        else {
            parents.memoryReason = "\(ControlGroupDiscovery.membershipPath) or \(ControlGroupDiscovery.mountInfoPath) cannot be read"
            parents.freezerV2Reason = parents.memoryReason
            parents.freezerV1Reason = parents.memoryReason
            return parents
        }
        let discovery = ControlGroupDiscovery.discover(membership: membership, mountInfo: mountInfo)

        // Memory: v2 with the controller delegated to children, else a v1 memory hierarchy.
        switch discovery.memory {
        case .v2(let group, _):
            let subtree = (try? KernelFile.read(group.directory.appending("cgroup.subtree_control"))) ?? ""
            if subtree.split(whereSeparator: \.isWhitespace).contains("memory") {
                if let failure = probe(group.directory, requiring: "memory.current") {
                    parents.memoryReason = failure
                } else {
                    parents.memory = Parent(directory: group.directory, isVersion2: true)
                }
            } else {
                parents.memoryReason = "\(group.directory.appending("cgroup.subtree_control")) does not enable memory for child cgroups"
            }
        case .v1(let group):
            if let failure = probe(group.directory, requiring: "memory.usage_in_bytes") {
                parents.memoryReason = failure
            } else {
                parents.memory = Parent(directory: group.directory, isVersion2: false)
            }
        case nil:
            parents.memoryReason = discovery.reason ?? "no memory cgroup"
        }

        // Freezer: cgroup.freeze in the process's cgroup2 tree, else the v1 freezer hierarchy.
        if let unified = discovery.unifiedDirectory {
            if let failure = probe(unified, requiring: "cgroup.freeze") {
                parents.freezerV2Reason = failure
            } else {
                parents.freezerV2 = unified
            }
        } else {
            parents.freezerV2Reason = "the process has no cgroup2 directory"
        }
        if let freezer = version1Directory(controller: "freezer", membership: membership, mountInfo: mountInfo) {
            if let failure = probe(freezer, requiring: "freezer.state") {
                parents.freezerV1Reason = failure
            } else {
                parents.freezerV1 = freezer
            }
        } else {
            parents.freezerV1Reason = "there is no v1 freezer hierarchy"
        }
        // The freezers' first: a frozen leftover's members die only once thawed, and its memory
        // cgroup empties only then.
        var swept: Set<FilePath> = []
        for parent in [parents.freezerV2, parents.freezerV1, parents.memory?.directory].compactMap(\.self) where swept.insert(parent).inserted {
            let found = removeLeftovers(in: parent)
            parents.leftovers.removed += found.removed
            parents.leftovers.emptied += found.emptied
        }
        return parents
    }

    /// Removes the cgroups that processes no longer alive left for their children in `parent` (a
    /// process killed before it could remove them). Those that still hold the dead maker's
    /// children (frozen, perhaps, for ever) are emptied first, their children thawed and killed, as
    /// the maker would have at its end: finding the parents waits for that (a few milliseconds a
    /// cgroup, 2 s at most), once per process, and only after a crash, so that a host that ends
    /// soon after leaves no sweep unfinished. A cgroup whose maker is alive is left alone. Returns
    /// those removed empty and those emptied.
    static func removeLeftovers(in parent: FilePath) -> Leftovers {
        guard let directory = opendir(parent.string) else { return Leftovers() }
        defer { closedir(directory) }
        let prefix = "memory-pressure-child-"
        var removed: [FilePath] = []
        var occupied: [FilePath] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix(prefix),
                  let maker = name.dropFirst(prefix.count).split(separator: "-").first.flatMap({ Int32($0) }),
                  maker != getpid(), kill(maker, 0) != 0, errno == ESRCH
            else { continue }
            if rmdir(parent.appending(name).string) == 0 {
                removed.append(parent.appending(name))
            } else if errno == EBUSY {
                occupied.append(parent.appending(name))
            }
        }
        for directory in occupied { _ = ChildControlGroups.removeEmptying(directory) }
        return Leftovers(removed: removed, emptied: occupied)
    }

    /// Makes a child directory of `parent`, checks that the kernel gave it `file`, and removes it;
    /// nil when that works, else why not.
    private static func probe(_ parent: FilePath, requiring file: String) -> String? {
        let probe = parent.appending("memory-pressure-probe-\(getpid())")
        guard mkdir(probe.string, 0o755) == 0 || errno == EEXIST else {
            return "cannot make a child cgroup in \(parent): \(Errno(rawValue: errno))"
        }
        defer { rmdir(probe.string) }
        guard access(probe.appending(file).string, W_OK) == 0 else {
            return "a child cgroup of \(parent) has no writable \(file)"
        }
        return nil
    }

    /// The process's directory in the v1 hierarchy of `controller`, from the texts of
    /// `/proc/self/cgroup` and `/proc/self/mountinfo`; nil when there is none.
    static func version1Directory(controller: String, membership: String, mountInfo: String) -> FilePath? {
        var relative: String?
        for line in membership.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            if fields.count == 3, fields[1].split(separator: ",").contains(Substring(controller)) {
                relative = String(fields[2])
            }
        }
        guard let relative else { return nil }
        for line in mountInfo.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let separator = fields.firstIndex(of: "-"), separator + 3 < fields.count, fields.count > 4,
                  fields[separator + 1] == "cgroup",
                  fields[separator + 3].split(separator: ",").contains(Substring(controller))
            else { continue }
            return ControlGroup.directory(
                forRelativePath: relative,
                mountRoot: ControlGroup.unescapeMountPath(fields[3]),
                mountPoint: ControlGroup.unescapeMountPath(fields[4])
            )
        }
        return nil
    }
}

/// The cgroups made for one child: its memory cgroup and its freezer cgroup (one directory on a
/// pure v2 host), made before the child starts and removed when it has been reaped.
final class ChildControlGroups: Sendable {
    /// The memory cgroup, when the child has one.
    package let memory: ChildControlGroupParents.Parent?
    /// The freezer cgroup, when the child is frozen through one.
    package let freezer: FilePath?
    /// Every directory made, deepest last (removed in reverse).
    package let directories: [FilePath]

    private static let sequence = Atomic<Int>(0)

    /// Makes the directories for a child under `memoryParent` and `freezerParent` (either may be
    /// nil). On failure removes what it made and throws.
    package init(
        memoryParent: ChildControlGroupParents.Parent?,
        freezerParent: FilePath?,
        memoryLimitBytes: Int?,
        executable: String
    ) throws(MemoryPressureError) {
        let number = Self.sequence.add(1, ordering: .relaxed).newValue
        let name = "memory-pressure-child-\(getpid())-\(number)"
        var made: [FilePath] = []
        func make(_ directory: FilePath) throws(MemoryPressureError) {
            if made.contains(directory) { return }
            guard mkdir(directory.string, 0o755) == 0 else {
                let failure = Errno(rawValue: errno)
                Self.remove(made)
                throw .processCouldNotStart(executable, step: "making the cgroup \(directory)", errno: failure)
            }
            made.append(directory)
        }
        var memory: ChildControlGroupParents.Parent?
        if let memoryParent {
            let directory = memoryParent.directory.appending(name)
            try make(directory)
            memory = ChildControlGroupParents.Parent(directory: directory, isVersion2: memoryParent.isVersion2)
            if let memoryLimitBytes {
                // v1: the memory limit, then memory+swap at the same figure (it may not be below the
                // memory limit), so that the child is OOM-killed at the limit rather than swapped.
                let files = memoryParent.isVersion2 ? ["memory.max"] : ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]
                for file in files {
                    let path = directory.appending(file)
                    if file == "memory.memsw.limit_in_bytes", access(path.string, F_OK) != 0 { continue }
                    do throws(Errno) {
                        try KernelFile.write("\(memoryLimitBytes)", to: path)
                    } catch {
                        Self.remove(made)
                        throw .processCouldNotStart(executable, step: "writing its memory limit to \(path)", errno: error)
                    }
                }
            }
        }
        var freezer: FilePath?
        if let freezerParent {
            let directory = freezerParent.appending(name)
            try make(directory)
            freezer = directory
        }
        self.memory = memory
        self.freezer = freezer
        self.directories = made
    }

    /// Opens each directory's `cgroup.procs` for writing, for the child to join before it runs.
    func openProcessLists(executable: String) throws(MemoryPressureError) -> [Int32] {
        var descriptors: [Int32] = []
        for directory in directories {
            let path = directory.appending("cgroup.procs").string
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                let failure = Errno(rawValue: errno)
                descriptors.forEach { close($0) }
                throw .processCouldNotStart(executable, step: "opening \(path)", errno: failure)
            }
            descriptors.append(descriptor)
        }
        return descriptors
    }

    /// The oom_kill count of the memory cgroup (v2 `memory.events`, v1 `memory.oom_control`); nil
    /// without one or where the kernel does not count it.
    package func oomKillCount() -> Int? {
        guard let memory else { return nil }
        if memory.isVersion2 {
            return try? ControlGroup(directory: memory.directory).events().oomKill
        }
        return try? ControlGroupV1(directory: memory.directory).oomKillCount()
    }

    /// Removes the directories once the child has been reaped. Members left behind (the child's own
    /// children) are thawed and killed first, as a cgroup with members cannot be removed. Returns
    /// the directories that could not be removed, with why.
    func removeAfterReaping() -> [(FilePath, Errno)] {
        var failures: [(FilePath, Errno)] = []
        for directory in directories.reversed() {
            if let failure = Self.removeEmptying(directory) { failures.append((directory, failure)) }
        }
        return failures
    }

    fileprivate static func removeEmptying(_ directory: FilePath) -> Errno? {
        if rmdir(directory.string) == 0 || errno == ENOENT { return nil }
        guard errno == EBUSY else { return Errno(rawValue: errno) }
        // Leftover members: let frozen ones run so that they can die, then kill them.
        if access(directory.appending("cgroup.freeze").string, W_OK) == 0 {
            _ = try? KernelFile.write("0", to: directory.appending("cgroup.freeze"))
        }
        if access(directory.appending("freezer.state").string, W_OK) == 0 {
            _ = try? KernelFile.write("THAWED", to: directory.appending("freezer.state"))
        }
        let deadline = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < deadline {
            let members = (try? KernelFile.read(directory.appending("cgroup.procs"))) ?? ""
            for member in members.split(separator: "\n") {
                if let pid = pid_t(member) { kill(pid, SIGKILL) }
            }
            if rmdir(directory.string) == 0 || errno == ENOENT { return nil }
            guard errno == EBUSY else { return Errno(rawValue: errno) }
            _ = poll(nil, 0, 5)
        }
        return .resourceBusy
    }

    private static func remove(_ directories: [FilePath]) {
        for directory in directories.reversed() { rmdir(directory.string) }
    }
}

extension KernelFile {
    /// Writes `text` to the kernel file at `path` in one write.
    package static func write(_ text: String, to path: FilePath) throws(Errno) {
        let descriptor = open(path.string, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Errno(rawValue: errno) }
        defer { close(descriptor) }
        guard writeAll(descriptor, text) else { throw Errno(rawValue: errno) }
    }
}

/// Writes `text` to `descriptor` in one `write`; false (with errno set) when it fails.
private func writeAll(_ descriptor: Int32, _ text: String) -> Bool {
    text.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) } >= 0
}
