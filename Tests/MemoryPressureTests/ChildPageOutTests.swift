#if canImport(Glibc)
import Glibc
#endif
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import SystemPackage
import Testing

/// A child's memory paged out with `process_madvise(MADV_PAGEOUT)`, frozen, against the real kernel.
///
/// With no swap on (the test suite's machines: swap is never turned on for the parallel suite, where
/// tests that expect the kernel to kill would change meaning), the kernel takes nothing, and the
/// child keeps its memory whole. With a zram swap device, which `tools/compression-kernel` turns on
/// for `CompressionKernelTests` alone, the same page-out compresses it.
@Suite(.serialized)
struct ChildPageOutTests {
    @Test func withNoSwapAPageOutAdvisesEverythingAndTakesNothing() async throws {
        let space = try SwapSpace.read()
        guard space.devices.isEmpty else { try Test.cancel("swap is on here (\(space.devices.map(\.path))): this test is about a machine with none") }
        let holder = try await MemoryHolder.start(mebibytes: 64)
        defer { holder.child.kill() }
        try holder.child.freeze()
        let before = try ProcessMemory.read(pid: holder.child.pid).residentBytes
        let advised = try holder.child.pageOut()
        #expect(advised >= 64 << 20, "every anonymous byte is advised: \(advised)")
        let after = try ProcessMemory.read(pid: holder.child.pid).residentBytes
        #expect(after >= before * 9 / 10, "with no swap the kernel keeps anonymous memory: \(before) then \(after)")
        try holder.child.thaw()
        #expect(try await holder.checksumNow() == holder.checksum)
    }

    @Test func anEndedChildIsPagedOutOfNothing() throws {
        let child = try ChildProcess.spawn(.shell("exit 0"))
        _ = child.waitForExit(timeout: .seconds(30))
        #expect(try child.pageOut() == 0)
    }
}

/// A child that fills `mebibytes` of anonymous memory with a known pattern, writes its SHA-256 to a
/// file (`ready SHA`), and on each SIGUSR1 reads it all again and writes `check SHA`.
struct MemoryHolder {
    let child: ChildProcess
    let log: HolderLog

    static func start(mebibytes: Int) async throws -> MemoryHolder {
        let log = try HolderLog()
        let child = try ChildProcess.spawn(log.specification(mebibytes: mebibytes))
        guard await log.ready() != nil else {
            child.kill()
            throw HolderLog.Failure("the holder wrote no ready line")
        }
        return MemoryHolder(child: child, log: log)
    }

    /// The checksum it wrote as it was ready.
    var checksum: String { log.readyChecksum ?? "" }

    /// Asks the child to read its memory again; the checksum it found.
    func checksumNow() async throws -> String {
        try await log.checksumNow { try child.signal(SIGUSR1) }
    }
}

/// The holder's program and what it writes: its checksums.
struct HolderLog {
    let path: String
    private let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.path.appending("holder.log").string
    }

    private static let program = #"""
        import hashlib, mmap, os, signal, sys
        size, out = int(sys.argv[1]) << 20, sys.argv[2]
        memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        page = 4096
        for offset in range(0, size, page):
            # Each page: its number, then a pattern: compressible, as most of a heap is, and no two alike.
            head = b"page %d " % (offset // page)
            memory[offset:offset + page] = (head + bytes(range(256)) * 16)[:page]
        def report(word):
            with open(out, "a") as f:
                f.write("%s %s\n" % (word, hashlib.sha256(memory).hexdigest()))
        signal.signal(signal.SIGUSR1, lambda number, frame: report("check"))
        report("ready")
        while True:
            signal.pause()
        """#

    /// The holder of `mebibytes`, writing here.
    func specification(mebibytes: Int) -> ProcessSpecification {
        ProcessSpecification(executable: "python3", arguments: ["-c", Self.program, "\(mebibytes)", path])
    }

    /// Waits for the ready line; its checksum, or nil when none came.
    func ready() async -> String? {
        guard await eventually({ readyChecksum != nil }) else { return nil }
        return readyChecksum
    }

    /// The checksum of the ready line, once written.
    var readyChecksum: String? {
        lines.first { $0.hasPrefix("ready ") }.map { String($0.dropFirst("ready ".count)) }
    }

    /// Sends the holder its signal with `signal`, and waits for the check line it writes: its checksum.
    func checksumNow(signal: () throws -> Void) async throws -> String {
        let checks = lines.filter { $0.hasPrefix("check ") }.count
        try signal()
        guard await eventually({ lines.filter { $0.hasPrefix("check ") }.count > checks }) else {
            throw Failure("the holder wrote no check line")
        }
        return String(lines.last { $0.hasPrefix("check ") }!.dropFirst("check ".count))
    }

    var lines: [String] {
        ((try? KernelFile.read(FilePath(path))) ?? "").split(separator: "\n").map(String.init)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
