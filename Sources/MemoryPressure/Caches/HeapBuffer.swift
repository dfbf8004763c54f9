import Jemalloc
import Synchronization

/// A buffer in an app's ``AppHeap``, such as an image's or a media frame's payload.
///
/// The buffer keeps its heap (and so its arena) alive, and frees its bytes before letting go of the
/// heap, so its memory is valid for as long as anything can reach it. Access to the bytes is
/// serialised by the buffer's lock.
public final class HeapBuffer: Sendable {
    /// The number of bytes.
    public let byteCount: Int
    /// The heap the bytes live in.
    package let heap: AppHeap
    /// Never nil until deinitialization.
    private let allocation: Mutex<ArenaAllocation?>

    init(_ allocation: consuming ArenaAllocation, in heap: AppHeap) {
        byteCount = allocation.byteCount
        self.heap = heap
        self.allocation = Mutex(Optional(allocation))
    }

    /// Calls `body` with the bytes, to read them.
    public func withUnsafeBytes<Result: Sendable, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try allocation.withLock { allocation throws(Failure) -> Result in
            try allocation!.withUnsafeBytes(body)
        }
    }

    /// Calls `body` with the bytes, to write them.
    public func withUnsafeMutableBytes<Result: Sendable, Failure: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try allocation.withLock { allocation throws(Failure) -> Result in
            try allocation!.withUnsafeMutableBytes(body)
        }
    }

    deinit {
        allocation.withLock { $0 = nil }
        heap.bufferFreed(byteCount: byteCount)
    }
}
