import CJemalloc

/// A buffer allocated in one jemalloc arena, freed exactly once when its owner lets it go.
///
/// The type cannot be copied, so there is never a second owner to free it again, and its bytes are
/// reachable only inside the `with…Bytes` closures while the value is alive. Allocation and release
/// bypass the thread cache: the arena's statistics count the bytes from the moment they are allocated
/// until the moment they are freed.
public struct ArenaAllocation: ~Copyable, @unchecked Sendable {
    // @unchecked: the pointer is owned uniquely by this non-copyable value, so sending the value
    // sends the only access to the bytes.
    private let base: UnsafeMutableRawPointer
    /// The number of usable bytes asked for.
    public let byteCount: Int
    /// The arena the bytes live in.
    public let arena: Arena
    private let flags: Int32

    init(byteCount: Int, alignment: Int, zeroed: Bool, arena: Arena) throws(JemallocError) {
        guard byteCount > 0, alignment > 0, alignment & (alignment - 1) == 0 else {
            throw JemallocError(kind: .invalidValue, key: "mallocx(\(byteCount), align \(alignment))", errno: 0)
        }
        let flags = cjemalloc_mallocx_arena(arena.index)
            | cjemalloc_mallocx_tcache_none()
            | cjemalloc_mallocx_lg_align(UInt32(alignment.trailingZeroBitCount))
        guard let base = mallocx(byteCount, flags | (zeroed ? cjemalloc_mallocx_zero() : 0)) else {
            throw JemallocError(kind: .outOfMemory, key: "mallocx(\(byteCount)) in \(arena)", errno: 0)
        }
        self.base = base
        self.byteCount = byteCount
        self.arena = arena
        self.flags = flags
    }

    /// Calls `body` with the bytes, to read them.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: byteCount))
    }

    /// Calls `body` with the bytes, to write them.
    public mutating func withUnsafeMutableBytes<Result, Failure: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeMutableRawBufferPointer(start: base, count: byteCount))
    }

    deinit {
        sdallocx(base, byteCount, flags)
    }
}
