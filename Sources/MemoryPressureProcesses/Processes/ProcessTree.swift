#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage
import MemoryPressureMeasurement

/// A process's descendants and their resident memory, from the kernel's per-thread
/// `/proc/PID/task/TID/children` lists: what a child started without a memory cgroup of its own
/// (``ChildMemoryMechanism/residentSet``) counts besides its own resident set, so that a shell or a
/// supervisor that forks its workers is charged for them.
///
/// The lists need a kernel built with `CONFIG_PROC_CHILDREN` (every major distribution's is); where
/// they are missing a child's descendants are not found, and only its own memory counts. Processes
/// that end while the tree is read are skipped. Resident sets are summed, so pages a parent shares
/// with its forks count once in each.
enum ProcessTree {
    /// The most descendants read per child and sample: a fork bomb must not make sampling slow.
    static let mostDescendants = 1024

    /// The descendants of `pid` (children first, then theirs), at most ``mostDescendants``.
    static func descendants(of pid: Int32) -> [Int32] {
        var found: [Int32] = []
        var next = 0
        var parent = pid
        while true {
            forEachChild(of: parent) { child in
                guard found.count < mostDescendants else { return false }
                found.append(child)
                return true
            }
            guard next < found.count, found.count < mostDescendants else { return found }
            parent = found[next]
            next += 1
        }
    }

    /// The resident bytes of `pid`'s descendants, summed; 0 when it has none.
    static func descendantsResidentBytes(of pid: Int32) -> Int {
        descendants(of: pid).reduce(0) { total, descendant in
            total + ((try? ProcessMemory.read(pid: descendant).residentBytes) ?? 0)
        }
    }

    /// Calls `body` with each child of each thread of `pid` until it returns false.
    private static func forEachChild(of pid: Int32, _ body: (Int32) -> Bool) {
        guard let tasks = opendir("/proc/\(pid)/task") else { return }
        defer { closedir(tasks) }
        while let entry = readdir(tasks) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let thread = Int32(name) else { continue }
            guard let list = try? KernelFile.read(FilePath("/proc/\(pid)/task/\(thread)/children")) else { continue }
            for field in list.split(separator: " ") {
                guard let child = Int32(field.trimmingSuffix(while: \.isWhitespace)) else { continue }
                guard body(child) else { return }
            }
        }
    }
}
