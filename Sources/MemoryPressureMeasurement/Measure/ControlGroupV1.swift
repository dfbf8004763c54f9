import SystemPackage
import MemoryPressureRuntime

/// A directory of the cgroup v1 `memory` hierarchy, and the memory files the kernel keeps in it.
package struct ControlGroupV1: Hashable, Sendable {
    /// The cgroup's directory, for example `/sys/fs/cgroup/memory/system.slice/app.service`.
    package let directory: FilePath

    /// The cgroup at `directory`.
    package init(directory: FilePath) {
        self.directory = directory
    }

    /// `memory.usage_in_bytes`: bytes the cgroup uses now, page cache included.
    package func usageBytes() throws(MemoryPressureError) -> Int {
        try KernelFile.parseBytes(path("memory.usage_in_bytes"), capacity: Self.byteCountCapacity, Self.parseByteCount(_:))
    }

    /// Reads `memory.usage_in_bytes` kept open (the sampling path).
    package static func usageBytes(from file: OpenKernelFile) throws(MemoryPressureError) -> Int {
        try file.parse(capacity: byteCountCapacity, parseByteCount(_:))
    }

    /// `memory.limit_in_bytes`: the cgroup's own hard limit.
    package func limit() throws(MemoryPressureError) -> CgroupLimit {
        try KernelFile.parse(path("memory.limit_in_bytes"), CgroupLimit.init(parsingVersion1:))
    }

    /// `memory.soft_limit_in_bytes`: the limit the kernel reclaims the cgroup towards under contention.
    package func softLimit() throws(MemoryPressureError) -> CgroupLimit {
        try KernelFile.parse(path("memory.soft_limit_in_bytes"), CgroupLimit.init(parsingVersion1:))
    }

    /// `memory.stat`'s `hierarchical_memory_limit` and `total_inactive_file`.
    package func statistics() throws(MemoryPressureError) -> ControlGroupV1Statistics {
        try KernelFile.parseBytes(path("memory.stat"), capacity: ControlGroupV1Statistics.fileCapacity) { ControlGroupV1Statistics(parsing: $0) }
    }

    /// `memory.oom_control`'s `oom_kill`: processes of the cgroup the OOM killer ended (Linux 4.13
    /// and later), the v1 counterpart of `memory.events`' `oom_kill`.
    package func oomKillCount() throws(MemoryPressureError) -> Int {
        try KernelFile.parse(path("memory.oom_control"), Self.oomKillCount(inOOMControl:))
    }

    /// The `oom_kill` figure of a `memory.oom_control` text: lines of `name value`.
    package static func oomKillCount(inOOMControl text: Substring) -> Int? {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, fields[0] == "oom_kill" { return Int(fields[1]).flatMap { $0 >= 0 ? $0 : nil } }
        }
        return nil
    }

    package func path(_ file: String) -> FilePath {
        directory.appending(file)
    }

    /// A number of bytes and a newline.
    private static let byteCountCapacity = 32

    private static func parseByteCount(_ text: UnsafeRawBufferPointer) -> Int? {
        KernelText.unsigned(KernelText.trimmed(text)).flatMap { Int(exactly: $0) }
    }
}

/// The figures of a v1 `memory.stat` the budget and the working set need.
package struct ControlGroupV1Statistics: Hashable, Sendable {
    /// `hierarchical_memory_limit`: the smallest `memory.limit_in_bytes` from the cgroup to the root.
    package var hierarchicalLimit: CgroupLimit
    /// `total_inactive_file`: inactive page cache of the cgroup and its descendants, in bytes.
    package var totalInactiveFileBytes: Int
    /// `total_swap`: the cgroup's and its descendants' pages in swap, in bytes; 0 where the kernel
    /// does not account swap to memory cgroups (no `total_swap` line).
    package var totalSwapBytes: Int

    package init(hierarchicalLimit: CgroupLimit, totalInactiveFileBytes: Int, totalSwapBytes: Int = 0) {
        self.hierarchicalLimit = hierarchicalLimit
        self.totalInactiveFileBytes = totalInactiveFileBytes
        self.totalSwapBytes = totalSwapBytes
    }

    /// Parses `name value` lines; nil when a line is malformed or either figure is missing.
    package init?<Text: Collection<UInt8>>(parsing text: Text) {
        var limit: CgroupLimit?
        var inactive: Int?
        var swap = 0
        let wellFormed = KernelText.allLines(of: text) { line in
            var name: Text.SubSequence?
            var value: UInt64?
            let fieldsAccepted = KernelText.allFields(of: line) { field in
                if name == nil {
                    name = field
                    return true
                }
                guard value == nil else { return false }
                value = KernelText.unsigned(field)
                return value != nil
            }
            guard fieldsAccepted, let name, let value else { return false }
            if KernelText.matches(name, "hierarchical_memory_limit") {
                limit = CgroupLimit(version1Bytes: value)
            } else if KernelText.matches(name, "total_inactive_file") {
                inactive = Int(exactly: value)
            } else if KernelText.matches(name, "total_swap") {
                swap = Int(exactly: value) ?? 0
            }
            return true
        }
        guard wellFormed, let limit, let inactive else { return nil }
        self.init(hierarchicalLimit: limit, totalInactiveFileBytes: inactive, totalSwapBytes: swap)
    }

    package static func read(from file: OpenKernelFile) throws(MemoryPressureError) -> ControlGroupV1Statistics {
        try file.parse(capacity: fileCapacity) { ControlGroupV1Statistics(parsing: $0) }
    }

    /// memory.stat is under 2 KiB on current kernels; room for more keys.
    static let fileCapacity = 8192

    /// The working set as Kubernetes computes it: usage less inactive page cache, not below zero.
    package func workingSetBytes(usageBytes: Int) -> Int {
        max(0, usageBytes - totalInactiveFileBytes)
    }
}

extension CgroupLimit {
    /// v1 writes "no limit" as the largest page-aligned `Int64` (9223372036854771712 with 4 KiB
    /// pages); anything from this threshold up, which also covers 64 KiB pages, is no limit.
    static let version1UnlimitedThreshold: UInt64 = 0x7FFF_FFFF_FFFF_0000

    /// A v1 figure: a number of bytes, unlimited at or above ``version1UnlimitedThreshold``.
    package init(version1Bytes value: UInt64) {
        if value >= Self.version1UnlimitedThreshold {
            self = .unlimited
        } else {
            self = .bytes(Int(value))
        }
    }

    /// Parses the text of `memory.limit_in_bytes` or `memory.soft_limit_in_bytes`.
    package init?(parsingVersion1 text: Substring) {
        guard let value = KernelText.unsigned(text.utf8) else { return nil }
        self.init(version1Bytes: value)
    }
}
