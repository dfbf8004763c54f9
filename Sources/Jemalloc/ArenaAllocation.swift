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
    private let alignment: Int

    init(byteCount: Int, alignment: Int, zeroed: Bool, arena: Arena) throws(JemallocError) {
        self.base = try arena.allocateUncached(byteCount: byteCount, alignment: alignment, zeroed: zeroed)
        self.byteCount = byteCount
        self.arena = arena
        self.alignment = alignment
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
        arena.deallocateUncached(base, byteCount: byteCount, alignment: alignment)
    }
}

extension Arena {
    /// Allocates `byteCount` bytes aligned to `alignment` in this arena, bypassing the thread
    /// cache, for an owner that frees them with ``deallocateUncached(_:byteCount:alignment:)``.
    ///
    /// - Throws: ``JemallocError`` (`invalidValue` for a byte count under 1 or an alignment that is
    ///   not a power of two, `outOfMemory` when jemalloc has no memory).
    package func allocateUncached(byteCount: Int, alignment: Int, zeroed: Bool) throws(JemallocError) -> UnsafeMutableRawPointer {
        try JemallocError.checkAllocation(byteCount: byteCount, alignment: alignment)
        let flags = uncachedFlags(alignment: alignment) | (zeroed ? cjemalloc_mallocx_zero() : 0)
        guard let base = mallocx(byteCount, flags) else {
            throw JemallocError(kind: .outOfMemory, key: "mallocx(\(byteCount)) in \(self)", errno: 0)
        }
        return base
    }

    /// Frees bytes from ``allocateUncached(byteCount:alignment:zeroed:)`` with the same byte count
    /// and alignment.
    package func deallocateUncached(_ base: UnsafeMutableRawPointer, byteCount: Int, alignment: Int) {
        sdallocx(base, byteCount, uncachedFlags(alignment: alignment))
    }

    private func uncachedFlags(alignment: Int) -> Int32 {
        cjemalloc_mallocx_arena(index) | cjemalloc_mallocx_tcache_none()
            | cjemalloc_mallocx_lg_align(UInt32(alignment.trailingZeroBitCount))
    }
}

extension JemallocError {
    /// Throws the error `mallocx` would give for `byteCount` bytes aligned to `alignment`, unless
    /// the byte count is 1 or more and the alignment a power of two.
    package static func checkAllocation(byteCount: Int, alignment: Int) throws(JemallocError) {
        guard byteCount > 0, alignment > 0, alignment & (alignment - 1) == 0 else {
            throw JemallocError(kind: .invalidValue, key: "mallocx(\(byteCount), align \(alignment))", errno: 0)
        }
    }
}
