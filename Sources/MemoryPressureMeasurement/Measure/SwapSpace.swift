import Synchronization
import SystemPackage
import MemoryPressureRuntime

/// The swap devices that are on (`/proc/swaps`), and what the zram ones among them cost in memory:
/// where a suspended app's memory can be compressed, and what each byte of it swapped still costs.
///
/// A zram device is swap in memory: what is paged out to it is compressed and kept in RAM, as iOS's
/// compressor keeps a suspended app's dirty pages. Compressed memory is still memory, so a swapped
/// byte is counted at ``costRatio`` of a byte. A disk is not: paging out to one is not compression,
/// and a suspended app's memory is not moved there (see ``unavailableReason``).
package struct SwapSpace: Sendable, Hashable {
    /// One swap device or file that is on.
    package struct Device: Sendable, Hashable {
        /// Its path, as `/proc/swaps` lists it (`/dev/zram0`, `/swapfile`).
        package var path: String
        /// Its size, in bytes.
        package var sizeBytes: Int
        /// The bytes swapped to it now.
        package var usedBytes: Int

        package init(path: String, sizeBytes: Int, usedBytes: Int) {
            self.path = path
            self.sizeBytes = sizeBytes
            self.usedBytes = usedBytes
        }

        /// The zram device's name (`zram0`), or nil when the device is not a zram device.
        package var zramName: String? {
            let prefix = "/dev/zram"
            guard path.hasPrefix(prefix), path.dropFirst(prefix.count).allSatisfy(\.isNumber), path.count > prefix.count else { return nil }
            return String(path.dropFirst("/dev/".count))
        }
    }

    /// What a zram device holds, from its `mm_stat`.
    package struct ZramUse: Sendable, Hashable {
        /// The bytes paged out to it, before compression.
        package var originalBytes: Int
        /// The same, compressed.
        package var compressedBytes: Int
        /// The memory the device uses to hold them: the compressed bytes and the allocator's own.
        package var memoryUsedBytes: Int

        package init(originalBytes: Int, compressedBytes: Int, memoryUsedBytes: Int) {
            self.originalBytes = originalBytes
            self.compressedBytes = compressedBytes
            self.memoryUsedBytes = memoryUsedBytes
        }
    }

    /// The swap devices that are on, in `/proc/swaps`'s order.
    package var devices: [Device]
    /// What each zram device among them holds, by name; a device whose `mm_stat` could not be read
    /// is left out.
    package var zram: [String: ZramUse]

    package init(devices: [Device], zram: [String: ZramUse]) {
        self.devices = devices
        self.zram = zram
    }

    /// The zram devices that are on.
    package var zramDevices: [Device] {
        devices.filter { $0.zramName != nil }
    }

    /// What a byte paged out to zram costs in memory: the memory the devices use over the bytes
    /// they hold (zsmalloc's overhead included, so that it never counts less than the compressed
    /// size). 1 while they hold nothing yet: a byte is then counted whole, never less than it may cost.
    package var costRatio: Double {
        let uses = zram.values
        let original = uses.reduce(0) { $0.addingClamped($1.originalBytes) }
        guard original > 0 else { return 1 }
        let used = uses.reduce(0) { $0.addingClamped(max($1.memoryUsedBytes, $1.compressedBytes)) }
        return min(1, Double(used) / Double(original))
    }

    /// The memory `swappedBytes` cost: at ``costRatio`` where a zram device is on, none where swap
    /// is only on a disk (memory paged out to a disk is not memory).
    package func memoryCost(ofSwapped swappedBytes: Int) -> Int {
        guard !zramDevices.isEmpty else { return 0 }
        return Int((Double(max(0, swappedBytes)) * costRatio).rounded(.up))
    }

    /// Why a suspended app's memory cannot be compressed here, or nil when it can (a zram swap
    /// device is on).
    package var unavailableReason: String? {
        if devices.isEmpty {
            return "no swap device is on (/proc/swaps lists none); compression needs a zram swap device"
        }
        if zramDevices.isEmpty {
            let paths = devices.map(\.path).joined(separator: ", ")
            return "swap is on \(paths) only, not on zram: paging out there writes to a disk, not compressed memory; compression needs a zram swap device"
        }
        return nil
    }

    /// `/proc/swaps`.
    package static let swapsPath: FilePath = "/proc/swaps"

    /// Reads the devices that are on and what their zram ones hold. A system with no `/proc/swaps`
    /// (no swap support) has none.
    package static func read(swaps: FilePath = swapsPath, block: FilePath = "/sys/block") throws(MemoryPressureError) -> SwapSpace {
        let devices: [Device]
        do {
            devices = try KernelFile.parse(swaps) { parse(swaps: $0) }
        } catch where error.code == .measurementUnavailable {
            devices = []
        }
        var zram: [String: ZramUse] = [:]
        for name in devices.compactMap(\.zramName) {
            zram[name] = try? KernelFile.parse(block.appending(name).appending("mm_stat")) { parse(mmStat: $0) }
        }
        return SwapSpace(devices: devices, zram: zram)
    }

    /// Parses `/proc/swaps`: a header line, then `path type size used priority` a line, sizes in KiB.
    package static func parse(swaps text: Substring) -> [Device]? {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)[...]
        guard let header = lines.popFirst(), header.hasPrefix("Filename") else { return nil }
        var devices: [Device] = []
        for line in lines {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 5, let size = Int(fields[2]), let used = Int(fields[3]), size >= 0, used >= 0 else { return nil }
            devices.append(Device(path: String(fields[0]), sizeBytes: bytes(kibibytes: size), usedBytes: bytes(kibibytes: used)))
        }
        return devices
    }

    /// The bytes of process `pid` (a number, or `self`) in swap: its `/proc/PID/status`'s `VmSwap`.
    package static func swappedBytes(ofProcess pid: String) throws(MemoryPressureError) -> Int {
        try KernelFile.parse(FilePath("/proc/\(pid)/status")) { swappedBytes(inStatus: $0) }
    }

    /// The `VmSwap:` figure of a `/proc/PID/status` text, in bytes (0 without one: no swap support).
    package static func swappedBytes(inStatus text: Substring) -> Int? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmSwap:") }) else { return 0 }
        return line.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { Int($0) }.map { bytes(kibibytes: $0) }
    }

    /// `kibibytes` in bytes, `Int.max` where that overflows.
    private static func bytes(kibibytes: Int) -> Int {
        let (product, overflow) = kibibytes.multipliedReportingOverflow(by: 1024)
        return overflow ? .max : product
    }

    /// Parses a zram device's `mm_stat`: `orig_data_size compr_data_size mem_used_total …`, in bytes.
    package static func parse(mmStat text: Substring) -> ZramUse? {
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count >= 3, let original = Int(fields[0]), let compressed = Int(fields[1]), let used = Int(fields[2]),
            original >= 0, compressed >= 0, used >= 0
        else { return nil }
        return ZramUse(originalBytes: original, compressedBytes: compressed, memoryUsedBytes: used)
    }
}

/// What a byte in swap costs in memory now: shared by what counts swapped bytes (a process app's
/// footprint) and updated by what reads the swap devices. 0, until updated and where swap is only
/// on a disk or off; up to 1 where it is on zram.
package final class SwapCost: Sendable {
    /// The cost per byte, in millionths.
    private let millionths = Atomic<Int>(0)

    package init() {}

    /// Takes the cost of `space`'s devices.
    package func update(from space: SwapSpace) {
        millionths.store(space.zramDevices.isEmpty ? 0 : Int((space.costRatio * 1_000_000).rounded(.up)), ordering: .relaxed)
    }

    /// The memory `swappedBytes` cost now.
    package func memoryCost(ofSwapped swappedBytes: Int) -> Int {
        let perMillion = millionths.load(ordering: .relaxed)
        guard perMillion > 0, swappedBytes > 0 else { return 0 }
        let (product, overflow) = swappedBytes.multipliedReportingOverflow(by: perMillion)
        return overflow ? swappedBytes : (product + 999_999) / 1_000_000
    }
}
