#if canImport(Glibc)
import Glibc
#endif
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
import SystemPackage
import Testing

/// `/proc/swaps` and zram's `mm_stat`, parsed: which devices are on, whether compression can work,
/// and what a swapped byte costs in memory.
struct SwapSpaceTests {
    static let swaps = """
        Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority
        /dev/zram0                              partition\t1048572\t\t204800\t\t100
        /swapfile                               file\t\t2097148\t\t0\t\t-2
        """

    @Test func devicesAreReadInKibibytes() throws {
        let devices = try #require(SwapSpace.parse(swaps: Self.swaps[...]))
        #expect(devices.map(\.path) == ["/dev/zram0", "/swapfile"])
        #expect(devices[0].sizeBytes == 1_048_572 * 1024 && devices[0].usedBytes == 204_800 * 1024)
        #expect(devices.map(\.zramName) == ["zram0", nil])
    }

    @Test func noDeviceOrOnlyADiskIsNoCompressionAndSaysWhy() throws {
        let none = SwapSpace(devices: try #require(SwapSpace.parse(swaps: "Filename\tType\tSize\tUsed\tPriority")), zram: [:])
        #expect(none.devices.isEmpty)
        #expect(none.unavailableReason?.contains("no swap device is on") == true)
        let disk = SwapSpace(devices: [.init(path: "/swapfile", sizeBytes: 1 << 30, usedBytes: 0)], zram: [:])
        #expect(disk.unavailableReason?.contains("/swapfile only, not on zram") == true)
        let zram = SwapSpace(devices: [.init(path: "/dev/zram0", sizeBytes: 1 << 30, usedBytes: 0)], zram: [:])
        #expect(zram.unavailableReason == nil)
    }

    @Test func aSwappedByteCostsWhatZramUsesForIt() throws {
        let use = try #require(SwapSpace.parse(mmStat: "209715200 10485760 12582912 0 12582912 100 0 0 0"))
        #expect(use == SwapSpace.ZramUse(originalBytes: 209_715_200, compressedBytes: 10_485_760, memoryUsedBytes: 12_582_912))
        let space = SwapSpace(devices: [.init(path: "/dev/zram0", sizeBytes: 1 << 30, usedBytes: 200 << 20)], zram: ["zram0": use])
        // 12 MiB of memory for 200 MiB paged out: 6 %, zsmalloc's overhead included.
        #expect(space.costRatio == 12_582_912.0 / 209_715_200.0)
        #expect(space.memoryCost(ofSwapped: 100 << 20) == 6 << 20)
        // Holding nothing yet, a byte is counted whole: never less than it may cost.
        let empty = SwapSpace(devices: space.devices, zram: ["zram0": .init(originalBytes: 0, compressedBytes: 0, memoryUsedBytes: 0)])
        #expect(empty.costRatio == 1)
        #expect(empty.memoryCost(ofSwapped: 4096) == 4096)
        // A disk is not memory: what is swapped there costs none.
        let disk = SwapSpace(devices: [.init(path: "/swapfile", sizeBytes: 1 << 30, usedBytes: 1 << 20)], zram: [:])
        #expect(disk.memoryCost(ofSwapped: 1 << 20) == 0)
    }

    @Test func malformedTextIsRefused() {
        #expect(SwapSpace.parse(swaps: "/dev/zram0 partition 1 0 100") == nil, "no header")
        #expect(SwapSpace.parse(swaps: "Filename Type Size Used Priority\n/dev/zram0 partition lots 0 100") == nil)
        #expect(SwapSpace.parse(mmStat: "1 2") == nil)
        #expect(SwapSpace.parse(mmStat: "-1 2 3") == nil)
    }

    /// This machine's own swap, whatever it is: read without error, and a reason exactly when no
    /// zram device is on.
    @Test func thisMachinesSwapIsRead() throws {
        let space = try SwapSpace.read()
        #expect((space.unavailableReason == nil) == !space.zramDevices.isEmpty)
    }
}

/// `/proc/PID/maps`, parsed into the private anonymous memory a page-out takes.
struct AnonymousMappingsTests {
    @Test func onlyPrivateWritableAnonymousMappingsAreKept() throws {
        let maps = """
            55d4c0a00000-55d4c0a21000 r--p 00000000 fd:01 1234                       /usr/bin/python3
            55d4c0c00000-55d4c0c40000 rw-p 00200000 fd:01 1234                       /usr/bin/python3
            55d4c1000000-55d4c1400000 rw-p 00000000 00:00 0                          [heap]
            7f0000000000-7f0010000000 rw-p 00000000 00:00 0 
            7f0010000000-7f0010001000 ---p 00000000 00:00 0 
            7f0020000000-7f0020100000 rw-s 00000000 00:01 77                         /dev/zero (deleted)
            7f0030000000-7f0030010000 rw-p 00000000 00:00 0                          [anon:jemalloc]
            7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]
            7ffc00100000-7ffc00102000 r--p 00000000 00:00 0                          [vvar]
            7ffc00102000-7ffc00104000 r-xp 00000000 00:00 0                          [vdso]
            """
        let mappings = try #require(AnonymousMappings.parse(maps: maps[...]))
        #expect(mappings.ranges.map(\.start) == [0x55d4_c100_0000, 0x7f00_0000_0000, 0x7f00_3000_0000, 0x7ffc_0000_0000])
        #expect(mappings.totalBytes == 0x40_0000 + 0x1000_0000 + 0x1_0000 + 0x2_1000)
        #expect(AnonymousMappings.parse(maps: "zz-10 rw-p 0 00:00 0") == nil)
    }

    /// This process's own maps hold a fresh anonymous mapping, whole.
    @Test func aFreshAnonymousMappingIsFound() throws {
        let length = 8 << 20
        let address = try #require(mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        defer { munmap(address, length) }
        let start = UInt(bitPattern: address)
        let mappings = try AnonymousMappings.read(pid: getpid())
        #expect(mappings.ranges.contains { $0.start <= start && $0.end >= start + UInt(length) })
    }
}

/// `VmSwap` of `/proc/PID/status`.
struct ProcessSwapTests {
    @Test func vmSwapIsReadInKibibytes() {
        #expect(SwapSpace.swappedBytes(inStatus: "Name:\tpython3\nVmRSS:\t  11776 kB\nVmSwap:\t  210432 kB\n") == 210_432 * 1024)
        #expect(SwapSpace.swappedBytes(inStatus: "Name:\tinit\n") == 0, "no VmSwap line: no swap support")
        #expect(SwapSpace.swappedBytes(inStatus: "VmSwap:\tlots kB\n") == nil)
    }

    @Test func thisProcesssSwapIsRead() throws {
        #expect(try SwapSpace.swappedBytes(ofProcess: "self") >= 0)
    }
}
