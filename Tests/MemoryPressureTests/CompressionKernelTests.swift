#if canImport(Glibc)
import Glibc
#endif
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import SystemPackage
import Testing

/// Compression against the real kernel with a zram swap device: a suspended 200 MiB child and
/// 200 MiB of this process's own memory, each paged out to under 10 % of its resident size and
/// brought back intact. Run by `tools/compression-kernel`, which makes the device for these tests
/// alone and removes it after; cancelled, with the reason, anywhere else.
@Suite(.serialized)
struct CompressionKernelTests {
    static let mebibytes = 200

    /// The zram swap this run may use, or a cancellation saying why there is none.
    static func zramSwap() throws -> SwapSpace {
        guard getenv("MEMORY_PRESSURE_COMPRESSION_TESTS").map({ String(cString: $0) }) == "1" else {
            try Test.cancel("run by tools/compression-kernel, which turns a zram swap device on for these tests alone")
        }
        let space = try SwapSpace.read()
        if let reason = space.unavailableReason { try Test.cancel(Comment(rawValue: reason)) }
        return space
    }

    @Test func aSuspendedChildIsCompressedAndComesBackWhole() async throws {
        _ = try Self.zramSwap()
        let holder = try await MemoryHolder.start(mebibytes: Self.mebibytes)
        defer { holder.child.kill() }
        try holder.child.freeze()
        let resident = try ProcessMemory.read(pid: holder.child.pid).residentBytes
        let clock = ContinuousClock()
        let start = clock.now
        let advised = try holder.child.pageOut()
        let pagedOut = clock.now - start
        let after = try ProcessMemory.read(pid: holder.child.pid).residentBytes
        let swapped = try Self.swappedBytes(pid: holder.child.pid)
        let cost = try SwapSpace.read().memoryCost(ofSwapped: swapped)
        print("compression: child of \(ByteCount(resident)) resident: advised \(ByteCount(advised)), \(ByteCount(after)) resident after, \(ByteCount(swapped)) swapped costing \(ByteCount(cost)), in \(pagedOut)")
        #expect(after < resident / 10, "paged out to under 10 % of its resident size: \(resident) then \(after)")
        #expect(swapped >= (Self.mebibytes << 20) * 9 / 10, "what left memory went to swap: \(swapped)")
        #expect(cost < resident / 10, "compressed to under 10 % of its resident size: \(cost) for \(resident)")

        try holder.child.thaw()
        let resumeStart = clock.now
        let checksum = try await holder.checksumNow()
        print("compression: the child read its \(Self.mebibytes) MiB back in \(clock.now - resumeStart)")
        #expect(checksum == holder.checksum, "its memory came back as it left it")
    }

    /// The ladder, under critical pressure, compresses a suspended 200 MiB process app instead of
    /// terminating it; its footprint still counts what zram spends on its memory, and it wakes whole.
    @Test func theLadderCompressesASuspendedProcessAppInsteadOfTerminatingIt() async throws {
        _ = try Self.zramSwap()
        let source = ScriptedSampleSource(residentBytes: 0)
        var configuration = try MemorySystem.Configuration.test(targetBytes: 80 * mebibyte, logger: silentLogger)
        configuration.monitor.sources = [source]
        let system = try MemorySystem(configuration: configuration)
        let log = try HolderLog()
        let app = try system.register(.test("holder"), process: log.specification(mebibytes: Self.mebibytes))
        let events = system.events.stream()
        try await system.running {
            try await app.launch()
            let ready = try #require(await log.ready())
            // Its 200 MiB put the footprint past critical; suspended, it is the ladder's to reclaim.
            #expect(try await app.enterBackground() == .suspended)
            let run = await events.first { event in
                if case .ladderRun(let run) = event { run.steps.contains { $0.step == .compressSuspended } } else { false }
            }
            #expect(run != nil, "a ladder run compressed it")
            #expect(system.terminations.isEmpty && app.state == .suspended, "and none terminated it")
            let pid = try #require(system.process(of: app.identifier)?.pid)
            let swapped = try Self.swappedBytes(pid: pid)
            let footprint = system.footprint(of: app.identifier).totalBytes
            print("compression: the ladder left the app at \(ByteCount(footprint)), \(ByteCount(swapped)) of it in swap")
            #expect(swapped >= (Self.mebibytes << 20) * 9 / 10)
            #expect(footprint >= (try SwapSpace.read()).memoryCost(ofSwapped: swapped), "what zram spends on it still counts")
            #expect(footprint < (Self.mebibytes << 20) / 5)

            #expect(try await app.enterForeground() == .active)
            let checksum = try await log.checksumNow { #expect(kill(pid, SIGUSR1) == 0) }
            #expect(checksum == ready, "it woke with its memory as it left it")
        }
        _ = await system.shutDown()
    }

    @Test func thisProcesssOwnMemoryIsCompressedAndComesBackWhole() throws {
        _ = try Self.zramSwap()
        let length = Self.mebibytes << 20
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 4096)
        defer { memory.deallocate() }
        let words = memory.bindMemory(to: UInt64.self)
        for index in words.indices {
            // Each page: its number, then a pattern, as the child's.
            words[index] = index % 512 == 0 ? UInt64(index / 512) : UInt64(index % 512) &* 0x0101_0101_0101_0101
        }
        let checksum = Self.checksum(UnsafeRawBufferPointer(memory))
        let resident = try Self.residentBytes(of: UnsafeRawBufferPointer(memory))
        let advised = try PageOut.pageOut(UnsafeRawBufferPointer(memory))
        let after = try Self.residentBytes(of: UnsafeRawBufferPointer(memory))
        print("compression: \(ByteCount(resident)) of this process's memory resident: advised \(ByteCount(advised)), \(ByteCount(after)) resident after")
        #expect(resident >= length * 9 / 10)
        #expect(after < resident / 10, "paged out to under 10 % of its resident size: \(resident) then \(after)")
        let clock = ContinuousClock()
        let start = clock.now
        #expect(Self.checksum(UnsafeRawBufferPointer(memory)) == checksum, "it came back as it left")
        print("compression: read \(Self.mebibytes) MiB back in \(clock.now - start)")
    }

    /// `VmSwap` of `/proc/PID/status`, in bytes.
    static func swappedBytes(pid: Int32) throws -> Int {
        let status = try KernelFile.read(FilePath("/proc/\(pid)/status"))
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmSwap:") }),
            let kibibytes = Int(line.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "")
        else { return 0 }
        return kibibytes * 1024
    }

    /// The bytes of `buffer`'s pages that are resident, by `mincore(2)`.
    static func residentBytes(of buffer: UnsafeRawBufferPointer) throws -> Int {
        var vector = [UInt8](repeating: 0, count: (buffer.count + 4095) / 4096)
        guard mincore(UnsafeMutableRawPointer(mutating: buffer.baseAddress!), buffer.count, &vector) == 0 else {
            throw HolderLog.Failure("mincore failed: \(Errno(rawValue: errno))")
        }
        return vector.reduce(0) { $0 + Int($1 & 1) } * 4096
    }

    /// FNV-1a over every 8-byte word: touches each page.
    static func checksum(_ buffer: UnsafeRawBufferPointer) -> UInt64 {
        buffer.withMemoryRebound(to: UInt64.self) { words in
            words.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ $1) &* 0x100_0000_01b3 }
        }
    }
}
