@testable import MemoryPressureRuntime
import Testing

struct ByteCountTests {
    @Test(arguments: [
        (0, "0 B"), (1023, "1023 B"), (1024, "1 KiB"), (1536, "1.5 KiB"),
        (512 << 20, "512 MiB"), (3 << 29, "1.5 GiB"), (-(2 << 20), "-2 MiB"), (5 << 40, "5 TiB"),
    ])
    func describesInBinaryUnits(_ bytes: Int, _ text: String) {
        #expect(ByteCount(bytes).description == text)
    }
}
