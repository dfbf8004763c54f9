/// The memory an app is charged with: its heap's bytes plus what its caches declare outside it.
public struct AppFootprint: Hashable, Sendable {
    /// Bytes of the live buffers in the app's heap, as asked for (see ``AppHeap/allocatedBytes``).
    public var heapBytes: Int
    /// Declared cost of the app's cache entries whose payloads live outside its heap.
    public var declaredBytesOutsideHeap: Int

    /// A footprint of these parts, in bytes.
    package init(heapBytes: Int, declaredBytesOutsideHeap: Int) {
        self.heapBytes = heapBytes
        self.declaredBytesOutsideHeap = declaredBytesOutsideHeap
    }

    /// The footprint.
    public var totalBytes: Int { heapBytes + declaredBytesOutsideHeap }
}
