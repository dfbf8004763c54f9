#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Jemalloc
import Synchronization

/// One app's own jemalloc arena, for the buffers it owns: cache payloads and backing stores.
///
/// Buffers (``HeapBuffer``) are allocated without the thread cache, so the arena's statistics count
/// exactly their bytes, and the heap keeps a running count of them that needs no epoch refresh.
/// Every buffer holds the heap alive, and the arena is destroyed (all its pages returned at once)
/// only when nothing can reach it any more: when the heap object goes away, or when it is closed once
/// the last buffer has been freed. No buffer can therefore outlive the memory it points into.
public final class AppHeap: Sendable {
    /// The app the heap belongs to.
    public let app: AppIdentifier
    /// The arena the heap allocates in.
    package let arena: Arena

    private struct State {
        var isClosed = false
        var isDestroyed = false
        var liveBuffers = 0
    }

    private let state = Mutex(State())
    private let allocated = Atomic<Int>(0)
    /// The most bytes the app may hold in the heap in its current state; `Int.max` for no limit.
    private let hardLimit = Atomic<Int>(.max)
    /// Where the heap's allocations are admitted against the budget, when a memory system hosts it.
    private let account: FootprintAccount?

    /// Allocations at least this large have their pages faulted in as they are made, so that the
    /// bytes the account counts are the bytes the process holds. Smaller ones come from pages the
    /// arena has mostly touched already.
    static let prefaultThreshold = 64 << 10
    /// How much is faulted in between two commits to the account.
    static let faultChunk = 2 << 20

    /// Creates a heap for `app` in a new arena, outside any memory system's account.
    package convenience init(app: AppIdentifier) throws(JemallocError) {
        try self.init(app: app, account: nil)
    }

    /// Creates a heap for `app` in a new arena, admitting its allocations through `account`.
    init(app: AppIdentifier, account: FootprintAccount?) throws(JemallocError) {
        self.app = app
        self.account = account
        arena = try Arena.create()
    }

    /// Allocates a buffer of `byteCount` bytes in the heap.
    ///
    /// In a heap a memory system hosts, the allocation is admitted first: it is refused at once if
    /// it would take the heap past the app's hard limit in its current state; if it would take the
    /// process past its budget, it wakes the reclamation ladder and waits (up to the configuration's
    /// `admissionWait`) for room, then is refused. A refused allocation leaves the heap's bytes
    /// unchanged. Large buffers' pages are faulted in before the buffer is returned.
    ///
    /// - Parameters:
    ///   - byteCount: The buffer's size in bytes; 1 or more.
    ///   - zeroed: Whether the bytes start as zero.
    /// - Returns: The buffer, counted in the heap until it is released.
    /// - Throws: ``MemoryPressureError`` (`heapClosed`, `allocationRefused`, `allocationFailed`).
    public func allocate(byteCount: Int, zeroed: Bool = false) throws(MemoryPressureError) -> HeapBuffer {
        try state.withLock { state throws(MemoryPressureError) in
            guard !state.isClosed else { throw .heapClosed(app) }
            state.liveBuffers += 1
        }
        do {
            try account?.admit(byteCount, app: app, heapBytes: allocatedBytes, hardLimit: hardLimit.load(ordering: .relaxed))
        } catch {
            bufferFreed(byteCount: 0)
            throw error
        }
        var allocation: ArenaAllocation
        do {
            allocation = try arena.allocate(byteCount: byteCount, zeroed: zeroed)
        } catch {
            account?.withdraw(byteCount)
            bufferFreed(byteCount: 0)
            throw .allocationFailed(error, app: app)
        }
        if byteCount >= Self.prefaultThreshold {
            // Fault in a chunk at a time, committing each as it becomes resident, so a sample taken
            // meanwhile counts every byte once: in statm, or as under way.
            allocation.withUnsafeMutableBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let chunk = min(Self.faultChunk, bytes.count - offset)
                    Self.faultIn(UnsafeMutableRawBufferPointer(rebasing: bytes[offset..<offset + chunk]))
                    account?.commit(chunk)
                    offset += chunk
                }
            }
        } else {
            account?.commit(byteCount)
        }
        allocated.add(byteCount, ordering: .relaxed)
        return HeapBuffer(allocation, in: self)
    }

    /// Makes `bytes`' pages resident: `MADV_POPULATE_WRITE` (Linux 5.14), or a write to each page
    /// where the kernel does not offer it. The bytes are new, so writing them changes nothing a
    /// caller may rely on: a zeroed buffer is written with zeros.
    private static func faultIn(_ bytes: UnsafeMutableRawBufferPointer) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = (Int(bitPattern: bytes.baseAddress) + page - 1) & ~(page - 1)
        let end = Int(bitPattern: bytes.baseAddress) + bytes.count
        guard end > start else { return }
        if madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, 23 /* MADV_POPULATE_WRITE */) == 0 { return }
        var address = start
        while address < end {
            UnsafeMutablePointer<UInt8>(bitPattern: address)!.pointee = 0
            address += page
        }
    }

    /// Sets the most bytes the heap may hold, as the app's state calls for; nil for no limit.
    func setHardLimit(_ bytes: Int?) {
        hardLimit.store(bytes ?? .max, ordering: .relaxed)
    }

    /// The bytes of the heap's live buffers, as asked for (jemalloc rounds each up to its size
    /// class); kept as buffers come and go, so it is current without an epoch refresh.
    public var allocatedBytes: Int { allocated.load(ordering: .relaxed) }

    /// The number of buffers alive now.
    package var liveBufferCount: Int { state.withLock { $0.liveBuffers } }

    /// The arena's statistics as of the last ``Jemalloc/advanceEpoch()``.
    package func statistics() throws(JemallocError) -> ArenaStatistics {
        try arena.statistics()
    }

    /// Returns the arena's freed pages to the operating system now.
    package func purge() throws(JemallocError) {
        try state.withLock { state throws(JemallocError) in
            guard !state.isDestroyed else { return }
            try arena.purge()
        }
    }

    /// Stops making buffers; destroys the arena now if no buffer is alive, otherwise as soon as the
    /// last one is freed. Returns whether the arena is destroyed on return.
    @discardableResult
    package func close() -> Bool {
        state.withLock { state in
            state.isClosed = true
            destroyIfUnreachable(&state)
            return state.isDestroyed
        }
    }

    /// Whether the arena has been destroyed.
    package var isDestroyed: Bool { state.withLock { $0.isDestroyed } }

    /// Called by a buffer after it has freed its bytes (or by a failed allocation).
    func bufferFreed(byteCount: Int) {
        allocated.subtract(byteCount, ordering: .relaxed)
        if byteCount > 0 { account?.release(byteCount) }
        state.withLock { state in
            state.liveBuffers -= 1
            destroyIfUnreachable(&state)
        }
    }

    private func destroyIfUnreachable(_ state: inout State) {
        guard state.isClosed, state.liveBuffers == 0, !state.isDestroyed else { return }
        destroyArena()
        state.isDestroyed = true
    }

    /// Destroys the arena; if jemalloc refuses (a thread bound to it), its pages are at least
    /// purged, and the index is left unused.
    private func destroyArena() {
        do {
            try arena.destroy()
        } catch {
            try? arena.purge()
        }
    }

    deinit {
        // Every buffer holds the heap, so none is alive here.
        if !state.withLock({ $0.isDestroyed }) { destroyArena() }
    }
}

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

    /// Calls `body` with the bytes, to read them, while no other access to them runs.
    ///
    /// - Parameter body: Reads the bytes; the pointer is valid only inside it.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withUnsafeBytes<Result: Sendable, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try allocation.withLock { allocation throws(Failure) -> Result in
            try allocation!.withUnsafeBytes(body)
        }
    }

    /// Calls `body` with the bytes, to write them, while no other access to them runs.
    ///
    /// - Parameter body: Writes the bytes; the pointer is valid only inside it.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
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
