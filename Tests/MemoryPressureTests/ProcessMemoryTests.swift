@testable import MemoryPressure
import Testing

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
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: byteCount, alignment: 4096)
        defer { buffer.deallocate() }
        _ = buffer.initializeMemory(as: UInt8.self, repeating: 1)
        let after = try ProcessMemory.current().residentBytes
        #expect(after - before >= byteCount / 2)
    }

    @Test func parsesPagesIntoBytes() {
        let memory = ProcessMemory.parse(statm: "1000 250 30 5 0 400 0", pageSize: 4096)
        #expect(memory == ProcessMemory(residentBytes: 250 * 4096, virtualBytes: 1000 * 4096, sharedBytes: 30 * 4096))
    }

    @Test(arguments: ["", "12", "a b c", "1 -2 3", "1 2"])
    func rejectsMalformedStatm(_ text: String) {
        #expect(ProcessMemory.parse(statm: Substring(text), pageSize: 4096) == nil)
    }
}
