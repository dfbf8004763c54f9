@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
import MemoryTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite(.exclusiveMemoryUse)
struct ProcessMemoryTests {
    @Test func readsTheRealStatm() throws {
        let memory = try ProcessMemory.current()
        #expect(memory.residentBytes > 1 << 20)
        #expect(memory.virtualBytes >= memory.residentBytes)
        #expect(memory.residentBytes % ProcessMemory.systemPageSize == 0)
    }

    @Test func residentBytesFollowTouchedPages() throws {
        let byteCount = 64 << 20
        let before = try ProcessMemory.current().residentBytes
        // Mapped directly rather than through malloc, so that tests of jemalloc's statistics running
        // in parallel do not see these pages.
        let address = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        try #require(address != MAP_FAILED)
        defer { munmap(address, byteCount) }
        _ = UnsafeMutableRawBufferPointer(start: address, count: byteCount).initializeMemory(as: UInt8.self, repeating: 1)
        let after = try ProcessMemory.current().residentBytes
        #expect(after - before >= byteCount / 2)
    }

    @Test func parsesPagesIntoBytes() {
        let memory = ProcessMemory.parse(statm: "1000 250 30 5 0 400 0\n".utf8, pageSize: 4096)
        #expect(memory == ProcessMemory(residentBytes: 250 * 4096, virtualBytes: 1000 * 4096, sharedBytes: 30 * 4096))
    }

    @Test(arguments: ["", "12", "a b c", "1 -2 3", "1 2", "1  2 3", "99999999999999999999 1 2 3"])
    func rejectsMalformedStatm(_ text: String) {
        #expect(ProcessMemory.parse(statm: text.utf8, pageSize: 4096) == nil)
    }
}
