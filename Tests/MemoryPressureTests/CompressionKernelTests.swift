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

/// Compression against the real kernel with a zram swap device: a suspended 200 MiB child and a
/// suspended in-process app's 200 MiB heap, each paged out to under 10 % of its resident size and
/// brought back intact, and the ladder compressing a process app instead of terminating it. Run by `tools/compression-kernel`, which makes the device for these tests
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
        let clock = ContinuousClock()
        // The same read with its memory resident: what the page-in adds to.
        let residentStart = clock.now
        #expect(try await holder.checksumNow() == holder.checksum)
        let residentRead = clock.now - residentStart
        try holder.child.freeze()
        let resident = try ProcessMemory.read(pid: holder.child.pid).residentBytes
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
        print("compression: the child read its \(Self.mebibytes) MiB back in \(clock.now - resumeStart), \(residentRead) when resident")
        #expect(checksum == holder.checksum, "its memory came back as it left it")
    }

    /// The ladder, under critical pressure, compresses a suspended 200 MiB process app instead of
    /// terminating it; its footprint still counts what zram spends on its memory, and it wakes whole.
    @Test func theLadderCompressesASuspendedProcessAppInsteadOfTerminatingIt() async throws {
        _ = try Self.zramSwap()
        let source = ScriptedSampleSource(residentBytes: 0)
        var configuration = try MemorySystem.Configuration.test(targetBytes: 80 * mebibyte, logger: silentLogger)
        configuration.monitor.sources = [source]
        configuration.compression = .automatic
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

    /// A suspended in-process app's 200 MiB heap, in 1 MiB buffers, compressed through the system's
    /// compressor: its pages leave memory, the samples count what zram spends on them, and the
    /// buffers come back intact.
    @Test func aSuspendedInProcessAppsHeapIsCompressedAndComesBackWhole() async throws {
        _ = try Self.zramSwap()
        var configuration = try MemorySystem.Configuration.test(targetBytes: 4 << 30, logger: silentLogger)
        configuration.compression = .automatic
        let system = try MemorySystem(configuration: configuration)
        let resumed = ForegroundClock()
        let app = try system.register(.test("photos")) { resumed }
        try await app.launch()
        let heap = try system.heap(for: app.identifier)
        var buffers: [HeapBuffer] = []
        for index in 0..<Self.mebibytes {
            let buffer = try heap.allocate(byteCount: 1 << 20)
            buffer.withUnsafeMutableBytes { Self.fill($0, number: index) }
            buffers.append(buffer)
        }
        let checksums = buffers.map { $0.withUnsafeBytes { Self.checksum($0) } }
        // The resume with its memory resident, for the figure with it compressed below.
        #expect(try await app.enterBackground() == .suspended)
        let residentResume = try await Self.resume(app, heardBy: resumed, buffers: buffers)
        #expect(residentResume.checksums == checksums)
        #expect(try await app.enterBackground() == .suspended)
        let resident = try buffers.reduce(0) { total, buffer in try total + buffer.withUnsafeBytes { try Self.residentBytes(of: $0) } }
        #expect(system.compressor.totalFootprintBytes(reading: .changing) == nil, "nothing of this process's own paged out yet")
        let advised = try #require(system.compressor.compress(app))
        let after = try buffers.reduce(0) { total, buffer in try total + buffer.withUnsafeBytes { try Self.residentBytes(of: $0) } }
        _ = system.compressor.refresh(reporting: false)
        let counted = try #require(system.compressor.totalFootprintBytes(reading: .changing), "once paged out, each sample counts it")
        let swapped = try Self.swappedBytes(pid: getpid())
        print("compression: an in-process app's \(ByteCount(resident)) heap: advised \(ByteCount(advised)), \(ByteCount(after)) resident after, this process's \(ByteCount(swapped)) in swap counted at \(ByteCount(counted))")
        #expect(advised >= (Self.mebibytes << 20) * 99 / 100, "every whole page of the buffers")
        #expect(after < resident / 10, "paged out to under 10 % of its resident size: \(resident) then \(after)")
        #expect(counted > 0 && counted < resident / 10, "its pages in swap count at what zram spends on them: \(counted)")
        let compressedResume = try await Self.resume(app, heardBy: resumed, buffers: buffers)
        #expect(compressedResume.checksums == checksums, "every buffer came back as it left")
        print("compression: the app's first callback came \(compressedResume.callback) after enterForeground compressed, "
            + "\(residentResume.callback) resident; it read its \(Self.mebibytes) MiB back in \(compressedResume.readBack) compressed, "
            + "\(residentResume.readBack) resident")
        await system.shutDown()
    }

    /// An app's delegate that notes when `willEnterForeground` comes.
    final class ForegroundClock: AppDelegate, Sendable {
        let heard = SharedBox<ContinuousClock.Instant?>(nil)

        func willEnterForeground(_ app: isolated App) {
            heard.value = ContinuousClock.now
        }
    }

    /// Brings the suspended `app` to the foreground; returns the time from `enterForeground` to
    /// its first callback (`willEnterForeground`, as `delegate` heard it), the time then to read
    /// every buffer again (the page-in, when compressed), and the buffers' checksums.
    static func resume(
        _ app: App, heardBy delegate: ForegroundClock, buffers: [HeapBuffer]
    ) async throws -> (callback: Duration, readBack: Duration, checksums: [UInt64]) {
        delegate.heard.value = nil
        let asked = ContinuousClock.now
        #expect(try await app.enterForeground() == .active)
        let heard = try #require(delegate.heard.value, "willEnterForeground came")
        let readStart = ContinuousClock.now
        let checksums = buffers.map { $0.withUnsafeBytes { Self.checksum($0) } }
        return (heard - asked, ContinuousClock.now - readStart, checksums)
    }

    /// Fills `bytes` as the child fills its memory: each 4 KiB, its number (with `number`), then the
    /// bytes 0 to 255 over and over: compressible, as most of a heap is, and no two pages alike.
    static func fill(_ bytes: UnsafeMutableRawBufferPointer, number: Int) {
        for offset in 0..<bytes.count { bytes[offset] = UInt8(truncatingIfNeeded: offset) }
        for page in stride(from: 0, to: bytes.count - 7, by: 4096) {
            bytes.storeBytes(of: UInt64(number << 32 | page >> 12), toByteOffset: page, as: UInt64.self)
        }
    }

    /// `VmSwap` of `/proc/PID/status`, in bytes.
    static func swappedBytes(pid: Int32) throws -> Int {
        try SwapSpace.swappedBytes(ofProcess: "\(pid)")
    }

    /// The bytes of the pages `buffer` touches that are resident, by `mincore(2)` (from the page
    /// its first byte is on: jemalloc may start a large allocation inside a page).
    static func residentBytes(of buffer: UnsafeRawBufferPointer) throws -> Int {
        let address = UInt(bitPattern: buffer.baseAddress!)
        let start = address & ~UInt(4095)
        let length = Int(address - start) + buffer.count
        var vector = [UInt8](repeating: 0, count: (length + 4095) / 4096)
        guard mincore(UnsafeMutableRawPointer(bitPattern: start), length, &vector) == 0 else {
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
