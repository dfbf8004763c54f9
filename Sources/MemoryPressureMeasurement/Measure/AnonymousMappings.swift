import SystemPackage
import MemoryPressureRuntime

/// The ranges of a process's address space that hold its private anonymous memory (its heap, its
/// stacks, its anonymous maps), from `/proc/PID/maps`: the memory only swap can take back while the
/// process keeps it, and so what compressing a suspended process pages out.
///
/// File-backed mappings are left out (the kernel drops their clean pages by itself, and writes
/// their dirty ones to their files), as are read-only and shared ones, and the kernel's own
/// (`[vdso]`, `[vvar]`, `[vsyscall]`).
package struct AnonymousMappings: Sendable, Hashable {
    /// One mapping: `[start, end)`.
    package struct Range: Sendable, Hashable {
        package var start: UInt
        package var end: UInt

        package init(start: UInt, end: UInt) {
            self.start = start
            self.end = end
        }

        /// Its length, in bytes.
        package var length: Int { Int(end - start) }
    }

    /// The mappings, in address order.
    package var ranges: [Range]

    package init(ranges: [Range]) {
        self.ranges = ranges
    }

    /// Their length in all, in bytes: what the process has mapped, not what is resident.
    package var totalBytes: Int {
        ranges.reduce(0) { $0.addingClamped($1.length) }
    }

    /// Reads process `pid`'s mappings now.
    package static func read(pid: Int32) throws(MemoryPressureError) -> AnonymousMappings {
        try KernelFile.parse(FilePath("/proc/\(pid)/maps")) { parse(maps: $0) }
    }

    /// Parses the text of a `maps` file: `start-end perms offset device inode [path]` a line, the
    /// addresses in hexadecimal.
    package static func parse(maps text: Substring) -> AnonymousMappings? {
        var ranges: [Range] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5 else { return nil }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16), start < end,
                fields[1].utf8.count == 4
            else { return nil }
            let permissions = Array(fields[1].utf8)
            let path = fields.count > 5 ? fields[5].drop(while: \.isWhitespace).trimmingSuffix(while: \.isWhitespace) : ""
            guard permissions[1] == UInt8(ascii: "w"), permissions[3] == UInt8(ascii: "p"), fields[4] == "0", isAnonymous(path) else {
                continue
            }
            ranges.append(Range(start: start, end: end))
        }
        return AnonymousMappings(ranges: ranges)
    }

    /// Whether a mapping's path names anonymous memory: none, the heap, a stack, or a named
    /// anonymous map.
    private static func isAnonymous(_ path: Substring) -> Bool {
        path.isEmpty || path == "[heap]" || path.hasPrefix("[stack") || path.hasPrefix("[anon:")
    }
}
