#if canImport(Glibc)
import Glibc
#endif
import Jemalloc
@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

@Suite(.exclusiveMemoryUse)
struct MemorySamplerTests {
    @Test func fullSampleReadsTheRealSources() throws {
        let sampler = MemorySampler(sources: PressureMonitor.Configuration.standardSources, logger: recordingLogger().0)
        let sample = sampler.sample(.full)
        let resident = try #require(sample.residentBytes)
        #expect(resident > 1 << 20)
        let jemalloc = try #require(sample.jemalloc)
        #expect(jemalloc.allocated > 0)
        #expect(jemalloc.resident >= jemalloc.active || jemalloc.active > 0)
        // This machine has PSI; a kernel without it leaves the figure unknown rather than failing.
        if (try? PressureStall.read()) != nil {
            #expect(sample.pressureStall != nil)
        }
    }

    @Test func cheapSampleReadsOnlyStatm() throws {
        let sampler = MemorySampler(sources: PressureMonitor.Configuration.standardSources, logger: recordingLogger().0)
        let sample = sampler.sample(.cheap)
        #expect(try #require(sample.residentBytes) > 1 << 20)
        #expect(sample.jemalloc == nil)
        #expect(sample.pressureStall == nil)
        #expect(sample.cgroupCurrentBytes == nil)
    }

    @Test func aMissingFileIsLoggedOnceAndLeftUnknown() {
        let (logger, messages) = recordingLogger()
        let sampler = MemorySampler(sources: [MissingSource(), ProcessMemorySampleSource()], logger: logger)
        for _ in 0..<5 {
            let sample = sampler.sample(.full)
            #expect(sample.residentBytes != nil)
        }
        #expect(messages.all.count == 1)
        #expect(messages.all.first?.contains("/nonexistent/memory.file") == true)
    }

    @Test func readsControlGroupEvents() throws {
        let directory = try TemporaryDirectory()
        try directory.write("memory.current", "4096\n")
        try directory.write("memory.events", "low 0\nhigh 3\nmax 2\noom 1\noom_kill 1\noom_group_kill 0\n")
        var sample = MemorySample(time: .now)
        try ControlGroupSampleSource(group: ControlGroup(directory: directory.path)).read(into: &sample)
        #expect(sample.cgroupCurrentBytes == 4096)
        #expect(sample.cgroupEvents == ControlGroupEvents(low: 0, high: 3, max: 2, oom: 1, oomKill: 1))
        #expect(ControlGroupEvents(parsing: "low 0\nhigh x\n".utf8) == nil)
    }
}

extension MemorySamplerTests {
    /// The cheap path re-reads one open descriptor; each reading must still be fresh.
    @Test func keptOpenStatmSeesNewPages() throws {
        let file = try OpenKernelFile(ProcessMemory.statmPath)
        let byteCount = 64 << 20
        let before = try ProcessMemory.read(from: file).residentBytes
        let address = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        try #require(address != MAP_FAILED)
        defer { munmap(address, byteCount) }
        _ = UnsafeMutableRawBufferPointer(start: address, count: byteCount).initializeMemory(as: UInt8.self, repeating: 1)
        #expect(try ProcessMemory.read(from: file).residentBytes - before >= byteCount / 2)
        #expect(try ProcessMemory.read(from: file).virtualBytes >= byteCount)
    }
}
