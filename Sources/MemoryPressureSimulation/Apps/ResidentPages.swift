import MemoryPressure

/// Draws a backing store's pixels: one byte in every page, so every page is resident.
let touchEveryPage: BackingStore.Renderer = { pixels in
    touchPages(of: pixels)
}

/// Writes one byte in every page of `bytes`, so the kernel backs each with memory.
func touchPages(of bytes: UnsafeMutableRawBufferPointer) {
    for offset in stride(from: 0, to: bytes.count, by: 4096) {
        bytes[offset] = 0xA5
    }
}
