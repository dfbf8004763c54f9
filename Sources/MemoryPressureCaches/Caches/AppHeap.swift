#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@_spi(AppHeaps) import Jemalloc
import Synchronization
import MemoryPressureRuntime
import MemoryPressureMonitor

/// The memory an app owns: cache payloads, backing stores, and any object the app allocates here,
/// counted exactly as it is allocated and freed, and given back at once when the app is terminated.
///
/// ## Where the bytes live
///
/// An arena per app would stop at jemalloc's 4,095 arenas and make every epoch refresh cost about
/// 9 µs per app, so heaps share the process's arena pool: a few arenas (four per core, at most 64),
/// handed out in turn, each reached through the calling thread's own cache for it. The heap counts
/// its own bytes (an atomic counter, current without any epoch refresh), so an app's footprint is
/// exact however many apps share an arena. A heap that grows past its policy's threshold
/// (`HeapArenaPolicy`, 64 MiB) takes an arena of its own, while the process has fewer than 64,
/// for the buffers it makes from then on.
///
/// When a closed heap (its app terminated) has nothing left in it, its pool arena is purged, which
/// returns the pages its buffers freed at once, and its own arena, if it has one, is destroyed. A
/// buffer larger than a page is its own extent in the arena, so its pages come back whole; small
/// objects share pages with other apps' and come back as those pages empty.
///
/// ## Two ways to allocate
///
/// ``allocate(byteCount:zeroed:)`` makes a ``HeapBuffer``, an object that frees its bytes when the
/// last reference goes and guards them with a lock: the safe way. A buffer of 256 bytes or less
/// is one object with its bytes inside it, so making and releasing it costs about three and a half
/// times a `malloc` and `free`. ``allocateBytes(byteCount:zeroed:)`` and ``deallocate(_:)`` are a
/// raw allocation, admitted and counted the same way, at about twice the cost of `malloc`, that
/// the caller frees exactly once through the same heap. Both block their thread while an
/// allocation waits for room under the budget; async code calls
/// ``allocateSuspending(byteCount:zeroed:)``, which suspends the task instead.
public final class AppHeap: Sendable {
    /// The app the heap belongs to.
    public let app: AppIdentifier
    /// Everything the heap's buffers need to free their bytes: it outlives the heap while any of
    /// them is alive.
    package let core: Core

    /// Creates a heap for `app` with an arena of its own from the start (while the process has
    /// fewer than ``HeapArenaPolicy/ownArenaLimit``), outside any memory system's account.
    package convenience init(app: AppIdentifier) throws(JemallocError) {
        try self.init(app: app, account: nil, policy: .ownArenaFromCreation)
    }

    /// Creates a heap for `app` in the arena pool, admitting its allocations through `account`.
    /// Takes no lock but the pool's creation, once per process, and refreshes no epoch.
    package init(app: AppIdentifier, account: FootprintAccount?, policy: HeapArenaPolicy = .standard) throws(JemallocError) {
        self.app = app
        core = try Core(app: app, account: account, policy: policy)
        core.heap = self
    }

    deinit {
        core.heapReleased()
    }

    // MARK: Allocation

    /// Allocates a buffer of `byteCount` bytes in the heap.
    ///
    /// In a heap a memory system hosts, the allocation is admitted first: it is refused at once if
    /// it would take the heap past the app's hard limit in its current state; if it would take the
    /// process past its budget, it wakes the reclamation ladder and waits (up to the configuration's
    /// `admissionWait`) for room, then is refused. On the reclamation thread (an observer of
    /// `MemorySystem.events`, or an eviction handler or discard callback the ladder runs), which
    /// makes that room, it is refused at once instead. A refused allocation leaves the heap's bytes
    /// unchanged. Large buffers' pages are faulted in before the buffer is returned.
    ///
    /// - Parameters:
    ///   - byteCount: The buffer's size in bytes; 1 or more.
    ///   - zeroed: Whether the bytes start as zero.
    /// - Returns: The buffer, counted in the heap until it is released.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` (`heapClosed`, `allocationRefused`, `allocationFailed`).
    public func allocate(byteCount: Int, zeroed: Bool = false) throws(MemoryPressureError) -> HeapBuffer {
        try makeBuffer(byteCount, zeroed: zeroed, heapBytes: core.admit(byteCount, heap: self))
    }

    /// Makes the buffer of `byteCount` bytes just admitted, which took the heap to `heapBytes`.
    @inline(__always)
    private func makeBuffer(_ byteCount: Int, zeroed: Bool, heapBytes: Int) throws(MemoryPressureError) -> HeapBuffer {
        if byteCount <= HeapBuffer.inlineLimit {
            return HeapBuffer.make(inline: byteCount, zeroed: zeroed, core: core)
        }
        let ownArena = core.ownArena(forHeapBytes: heapBytes)
        let base = try core.allocateAdmitted(byteCount, zeroed: zeroed, in: ownArena)
        return HeapBuffer.make(base, byteCount: byteCount, ownArena: ownArena, core: core)
    }

    /// Allocates a buffer of `byteCount` bytes in the heap, as ``allocate(byteCount:zeroed:)`` does,
    /// for async code: while the allocation waits for room under the budget, the task is suspended
    /// and its thread is free for other tasks, where ``allocate(byteCount:zeroed:)`` blocks its
    /// thread.
    ///
    /// The wait is as long, and ends as early, as the synchronous allocation's: as soon as the
    /// reclamation ladder has made room, or, refused, after the configuration's `admissionWait`. It
    /// also ends, refused, when the task is cancelled. A refused allocation leaves the heap's bytes
    /// unchanged.
    ///
    /// ```swift
    /// let frame = try await heap.allocateSuspending(byteCount: 8 << 20)
    /// ```
    ///
    /// - Parameters:
    ///   - byteCount: The buffer's size in bytes; 1 or more.
    ///   - zeroed: Whether the bytes start as zero.
    /// - Returns: The buffer, counted in the heap until it is released.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` (`heapClosed`, `allocationRefused`, `allocationFailed`).
    public func allocateSuspending(byteCount: Int, zeroed: Bool = false) async throws(MemoryPressureError) -> HeapBuffer {
        try makeBuffer(byteCount, zeroed: zeroed, heapBytes: await core.admitSuspending(byteCount))
    }

    /// Allocates `byteCount` bytes, aligned to 16, for the caller to free with ``deallocate(_:)``:
    /// the fast way to keep many small objects in the heap.
    ///
    /// The allocation is admitted and counted as ``allocate(byteCount:zeroed:)``'s are, and goes
    /// to the heap's pool arena through the calling thread's cache for it, taking no lock: a
    /// 256-byte allocation and its release cost a few times what `malloc` and `free` do. The bytes
    /// are the caller's until they are passed to ``deallocate(_:)`` of this heap, exactly once (as
    /// with `malloc`, nothing checks this); the heap must be kept until then. They stay valid after
    /// the heap is closed, until deallocated.
    ///
    /// - Parameters:
    ///   - byteCount: The size in bytes; 1 or more.
    ///   - zeroed: Whether the bytes start as zero.
    /// - Returns: The bytes, uninitialized unless `zeroed`.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` (`heapClosed`, `allocationRefused`, `allocationFailed`).
    @inline(__always)
    public func allocateBytes(byteCount: Int, zeroed: Bool = false) throws(MemoryPressureError) -> UnsafeMutableRawBufferPointer {
        try core.admit(byteCount, heap: self)
        return UnsafeMutableRawBufferPointer(start: try core.allocateAdmitted(byteCount, zeroed: zeroed, in: nil), count: byteCount)
    }

    /// Frees bytes that ``allocateBytes(byteCount:zeroed:)`` of this heap returned, and lowers the
    /// heap's count by their size. Bytes with no address (an empty buffer, such as a placeholder
    /// never replaced) are ignored, as `UnsafeMutableRawBufferPointer.deallocate()` and `free(NULL)`
    /// ignore them.
    ///
    /// - Parameter bytes: The bytes, exactly as returned; after this call they must not be used.
    @inline(__always)
    public func deallocate(_ bytes: UnsafeMutableRawBufferPointer) {
        // An empty buffer trapped here, where Swift's own `deallocate()` does nothing.
        guard let base = bytes.baseAddress else { return }
        core.free(base, byteCount: bytes.count, in: nil)
    }

    /// The largest allocation a heap accepts, 2^56 bytes: more than any machine's address space, and
    /// small enough that no sum of byte counts in flight can overflow.
    static let largestAllocation = 1 << 56

    // MARK: Arenas and state

    /// The arena new buffers larger than ``HeapBuffer``'s inline limit go to: the heap's own if it
    /// has one, else its pool arena (shared).
    package var arena: Arena { core.arena }

    /// The pool slot the heap allocates in, shared with other heaps.
    package var poolSlot: ArenaPool.Slot { core.slot }

    /// Sets the most bytes the heap may hold, as the app's state calls for; nil for no limit.
    package func setHardLimit(_ bytes: Int?) {
        core.hardLimit.store(bytes ?? .max, ordering: .relaxed)
    }

    /// The bytes of the heap's live allocations, as asked for (jemalloc rounds each up to its size
    /// class); kept as they come and go, so it is current without an epoch refresh.
    public var allocatedBytes: Int { core.allocatedBytes }

    /// The statistics of ``arena`` as of the last ``Jemalloc/advanceEpoch()``; a pool arena's
    /// cover every heap that shares it.
    package func statistics() throws(JemallocError) -> ArenaStatistics {
        try arena.statistics()
    }

    /// Returns the free pages of the heap's own arena, if it has one, to the operating system now.
    /// Its pool arena is the registry's to purge, once for all the heaps that share it.
    package func purgeOwnArena() throws(JemallocError) {
        try core.purgeOwnArena()
    }

    /// Stops making allocations; finishes the heap now if it holds nothing, otherwise as soon as
    /// the last allocation is freed: destroys its own arena and purges its pool arena, so the pages
    /// come back at once. Returns whether the heap is finished on return.
    @discardableResult
    package func close() -> Bool {
        core.close()
    }
}

extension AppHeap {
    /// A heap's arenas, counters and state: what its allocations are admitted against and its
    /// buffers free their bytes through.
    ///
    /// The buffers hold it unretained (a retain and release per buffer would be two more locked
    /// instructions on a path of a few nanoseconds): it lives while its heap does and, after that,
    /// while it counts any bytes. The heap's bytes and two flags share one atomic word, so that the
    /// free that empties a closed or dropped heap knows it in the same instruction that uncounts
    /// its bytes, and is the only one to know it. Whoever may leave the core to such a free takes
    /// a reference for it first: ``close()`` while bytes remain (the *closing* reference), and the
    /// heap's deinitialization while bytes remain (the *buffers'* reference). The free that takes
    /// the count to zero finishes the heap and releases them; until then, every free is a single
    /// atomic subtract that touches the core no more.
    package final class Core: Sendable {
        package let app: AppIdentifier
        private let pool: ArenaPool
        /// The pool arena the heap's raw allocations, and its buffers until it has an own arena, go to.
        package let slot: ArenaPool.Slot
        private let policy: HeapArenaPolicy
        /// The index of the heap's own arena, ``noArena`` until it takes one.
        private let ownArenaIndex = Atomic<UInt32>(noArena)
        static let noArena = UInt32.max
        /// Held while the own arena is taken, purged or destroyed, and while the heap is finished.
        private let ownArenaLock = LibraryLock(OwnArenaState())

        private struct OwnArenaState {
            /// The limit or jemalloc refused an own arena: the heap stays in the pool.
            var refused = false
        }

        /// The heap's bytes (the low bits, ``bytesMask``), whether it is closed (``closedFlag``) and
        /// whether the ``AppHeap`` is alive (``heldFlag``). The bytes are raised by a
        /// compare-and-swap that checks the hard limit and the closed flag in the same step, and
        /// lowered with wrapping subtracts.
        private let state = Atomic<Int>(heldFlag)
        static let bytesMask = (1 << 60) - 1
        static let closedFlag = 1 << 60
        static let heldFlag = 1 << 61
        /// The most bytes a heap holds whatever its hard limit, so that the count never reaches the
        /// flags (eight allocations of ``AppHeap/largestAllocation``, far past any address space).
        static let mostBytes = 1 << 59
        /// Closed, empty, its own arena destroyed and its pool arena purged.
        package let finished = Atomic<Bool>(false)
        /// The most bytes the app may hold in the heap in its current state; `Int.max` for no limit.
        package let hardLimit = Atomic<Int>(.max)
        /// Where the heap's allocations are admitted against the budget, when a memory system hosts it.
        private let account: FootprintAccount?
        /// `account`, unretained: the allocation path reaches it without a retain and release, while
        /// `account` keeps it alive.
        private let accountReference: Unmanaged<FootprintAccount>?
        /// The heap, while it lives: for ``HeapBuffer/heap``. Set once, before the heap is shared.
        package nonisolated(unsafe) weak var heap: AppHeap?
        /// The live allocations of at least ``prefaultThreshold`` bytes, their sizes by address:
        /// what a compression pages out (``pageOutLargeAllocations()``). Smaller ones share pages with
        /// other apps' in the pool arena. Kept on the large path only, which faults its pages in and
        /// costs microseconds already.
        private let largeAllocations = LibraryLock<[UInt: Int]>([:])

        /// Allocations at least this large have their pages faulted in as they are made, so that the
        /// bytes the account counts are the bytes the process holds. Smaller ones come from pages the
        /// arena has mostly touched already.
        static let prefaultThreshold = 64 << 10
        /// How much is faulted in between two commits to the account.
        static let faultChunk = 2 << 20
        /// The alignment of every allocation.
        package static let alignment = 16

        package init(app: AppIdentifier, account: FootprintAccount?, policy: HeapArenaPolicy) throws(JemallocError) {
            self.app = app
            self.account = account
            accountReference = account.map { .passUnretained($0) }
            self.policy = policy
            pool = try ArenaPool.shared.get()
            slot = pool.nextSlot()
            if policy.ownArenaThreshold == 0 { _ = takeOwnArena() }
        }

        /// The heap's bytes.
        package var allocatedBytes: Int { state.load(ordering: .relaxed) & Self.bytesMask }

        /// Whether the heap is finished: closed and empty, its own arena destroyed, its pool arena's
        /// free pages returned.
        var isFinished: Bool { finished.load(ordering: .acquiring) }

        // MARK: Admission

        /// Counts `byteCount` more bytes in the heap and admits them: checks the byte count, that the
        /// heap is open, the hard limit and the budget. Returns the heap's bytes with them.
        @discardableResult
        @inline(__always)
        func admit(_ byteCount: Int, heap: AppHeap) throws(MemoryPressureError) -> Int {
            let heapBytes = try reserve(byteCount)
            guard let accountReference else { return heapBytes }
            let refusal = accountReference._withUnsafeGuaranteedRef { account -> MemoryPressureError? in
                do throws(MemoryPressureError) {
                    try account.admit(byteCount, faultedInLater: byteCount >= Self.prefaultThreshold) { heap.app }
                    return nil
                } catch {
                    return error
                }
            }
            if let refusal {
                remove(byteCount)
                throw refusal
            }
            return heapBytes
        }

        /// As ``admit(_:heap:)``, suspending the task, not blocking its thread, while the allocation
        /// waits for room under the budget.
        func admitSuspending(_ byteCount: Int) async throws(MemoryPressureError) -> Int {
            let heapBytes = try reserve(byteCount)
            do throws(MemoryPressureError) {
                try await account?.admitSuspending(byteCount, app: app, faultedInLater: byteCount >= Self.prefaultThreshold)
            } catch {
                remove(byteCount)
                throw error
            }
            return heapBytes
        }

        /// Counts `byteCount` more bytes in the heap: checks the byte count, that the heap is open and
        /// the hard limit. Returns the heap's bytes with them.
        @inline(__always)
        private func reserve(_ byteCount: Int) throws(MemoryPressureError) -> Int {
            guard byteCount > 0, byteCount <= AppHeap.largestAllocation else {
                throw invalidByteCount(byteCount)
            }
            // Counted only when the heap is open and they fit under the hard limit, checked and added
            // in one step, so that a refused allocation leaves no trace in the count another thread
            // (the limit enforcer) reads, and an allocation racing a close either is refused or is
            // counted before the close reads the count.
            let limit = min(hardLimit.load(ordering: .relaxed), Self.mostBytes)
            var current = state.load(ordering: .relaxed)
            while true {
                guard current & Self.closedFlag == 0 else { throw .heapClosed(app) }
                let heapBytes = current & Self.bytesMask
                guard byteCount <= limit - heapBytes else {
                    throw refuseOverHardLimit(byteCount, heapBytes: heapBytes, hardLimit: limit)
                }
                let (exchanged, original) = state.weakCompareExchange(
                    expected: current, desired: current + byteCount, ordering: .sequentiallyConsistent
                )
                if exchanged { break }
                current = original
            }
            return current & Self.bytesMask + byteCount
        }

        /// The error for a byte count of 0 or less, or past ``AppHeap/largestAllocation``.
        @inline(never)
        private func invalidByteCount(_ byteCount: Int) -> MemoryPressureError {
            guard byteCount > 0 else {
                do {
                    try JemallocError.checkAllocation(byteCount: byteCount, alignment: Self.alignment)
                } catch {
                    return .allocationFailed(error, app: app)
                }
                preconditionFailure("checkAllocation accepts only byte counts of 1 or more")
            }
            return .allocationTooLarge(app: app, bytes: byteCount, maximum: AppHeap.largestAllocation)
        }

        /// The refusal of `byteCount` bytes past the hard limit, recorded by the account when the heap
        /// has one.
        @inline(never)
        private func refuseOverHardLimit(_ byteCount: Int, heapBytes: Int, hardLimit: Int) -> MemoryPressureError {
            guard let account else {
                return .heapOverHardLimit(app: app, bytes: byteCount, heapBytes: heapBytes, hardLimit: hardLimit)
            }
            return account.refuse(byteCount, app: app, .hardLimit(hardLimit, heapBytes: heapBytes))
        }

        // MARK: Allocation

        /// Allocates admitted bytes in `ownArena`, or in the pool when nil, and faults large ones in.
        @inline(__always)
        func allocateAdmitted(_ byteCount: Int, zeroed: Bool, in ownArena: Arena?) throws(MemoryPressureError) -> UnsafeMutableRawPointer {
            let faultedInLater = byteCount >= Self.prefaultThreshold
            let allocation: UnsafeMutableRawPointer?
            if let ownArena {
                allocation = try? ownArena.allocateUncached(byteCount: byteCount, alignment: Self.alignment, zeroed: zeroed)
            } else {
                allocation = slot.allocate(byteCount: byteCount, alignment: Self.alignment, zeroed: zeroed)
            }
            guard let base = allocation else {
                account?.withdraw(byteCount, faultedInLater: faultedInLater)
                remove(byteCount)
                throw .allocationFailed(JemallocError(kind: .outOfMemory, key: "mallocx(\(byteCount)) in \(ownArena ?? slot.arena)", errno: 0), app: app)
            }
            if faultedInLater {
                // Fault in a chunk at a time, committing each as it becomes resident, so a sample taken
                // meanwhile counts every byte once: in statm, or as under way.
                var offset = 0
                while offset < byteCount {
                    let chunk = min(Self.faultChunk, byteCount - offset)
                    Self.faultIn(UnsafeMutableRawBufferPointer(start: base + offset, count: chunk))
                    account?.commit(chunk)
                    offset += chunk
                }
                largeAllocations.withLock { $0[UInt(bitPattern: base)] = byteCount }
            }
            return base
        }

        /// Pages the heap's large allocations out to swap (``/MemoryPressureRuntime/PageOut``): with
        /// a zram swap device, they are kept compressed until touched. Returns the bytes advised.
        /// The ranges are taken under the lock and advised outside it: one freed meanwhile is
        /// jemalloc's again, and paging its pages out changes nothing but where they are.
        package func pageOutLargeAllocations() throws(MemoryPressureError) -> Int {
            let ranges = largeAllocations.withLock { Array($0) }
            var advised = 0
            for (address, byteCount) in ranges {
                guard let base = UnsafeRawPointer(bitPattern: address) else { continue }
                advised = advised.addingClamped(try PageOut.pageOut(UnsafeRawBufferPointer(start: base, count: byteCount)))
            }
            return advised
        }

        /// Frees `byteCount` bytes at `base`, allocated in `ownArena` or, when nil, in the pool, and
        /// uncounts them. The core may be gone once this returns.
        @inline(__always)
        package func free(_ base: UnsafeMutableRawPointer, byteCount: Int, in ownArena: Arena?) {
            if byteCount >= Self.prefaultThreshold {
                largeAllocations.withLock { $0[UInt(bitPattern: base)] = nil }
            }
            if let ownArena {
                ownArena.deallocateUncached(base, byteCount: byteCount, alignment: Self.alignment)
            } else {
                slot.deallocate(base, byteCount: byteCount, alignment: Self.alignment)
            }
            uncount(byteCount)
        }

        /// Uncounts `byteCount` bytes that were freed (or are freed by the caller right after,
        /// outside the heap's arenas). The core may be gone once this returns.
        @inline(__always)
        func uncount(_ byteCount: Int) {
            accountReference?._withUnsafeGuaranteedRef { account in
                // A large buffer's pages stay resident in its arena until decay or a purge.
                if byteCount >= Self.prefaultThreshold { account.releaseLarge(byteCount) } else { account.release(byteCount) }
            }
            remove(byteCount)
        }

        /// Lowers the heap's count by `byteCount`; finishes the heap if it is closed or dropped and
        /// now empty. The core may be gone once this returns: nothing after the subtract touches it
        /// unless the subtract emptied a closed or dropped heap, which only one caller does.
        @inline(__always)
        private func remove(_ byteCount: Int) {
            let after = state.wrappingSubtract(byteCount, ordering: .sequentiallyConsistent).newValue
            if after & Self.bytesMask == 0, after != Self.heldFlag {
                emptied(after)
            }
        }

        /// The heap, closed or dropped, is empty as of the subtract that left `state`: finishes it and
        /// releases the references taken for this moment.
        @inline(never)
        private func emptied(_ state: Int) {
            finish()
            let core = Unmanaged.passUnretained(self)
            let closingReference = state & Self.closedFlag != 0
            let buffersReference = state & Self.heldFlag == 0
            if closingReference { core.release() }
            if buffersReference { core.release() }
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

        // MARK: Arenas

        /// The arena a buffer goes to when the heap holds `heapBytes` with it: the heap's own, taken
        /// now if the policy calls for it, or nil for the pool.
        func ownArena(forHeapBytes heapBytes: Int) -> Arena? {
            let index = ownArenaIndex.load(ordering: .acquiring)
            if index != Self.noArena { return Arena(index: index) }
            guard heapBytes >= policy.ownArenaThreshold else { return nil }
            return takeOwnArena()
        }

        /// Takes an arena of the heap's own, unless it has one, or the limit or jemalloc refused one.
        private func takeOwnArena() -> Arena? {
            ownArenaLock.withLock { state -> Arena? in
                let index = ownArenaIndex.load(ordering: .relaxed)
                if index != Self.noArena { return Arena(index: index) }
                guard !state.refused, HeapArenaPolicy.claimOwnArena() else {
                    state.refused = true
                    return nil
                }
                do {
                    let arena = try Arena.createWithoutEpochRefresh()
                    ownArenaIndex.store(arena.index, ordering: .releasing)
                    return arena
                } catch {
                    HeapArenaPolicy.returnOwnArena()
                    state.refused = true
                    return nil
                }
            }
        }

        /// The heap's own arena, if it has taken one.
        private var ownArena: Arena? {
            let index = ownArenaIndex.load(ordering: .acquiring)
            return index == Self.noArena ? nil : Arena(index: index)
        }

        /// The arena new buffers go to: the heap's own if it has one, else its pool arena (shared).
        package var arena: Arena { ownArena ?? slot.arena }

        /// Returns the free pages of the heap's own arena, if it has one, to the operating system now.
        func purgeOwnArena() throws(JemallocError) {
            try ownArenaLock.withLock { _ throws(JemallocError) in
                guard let ownArena, !finished.load(ordering: .relaxed) else { return }
                try ownArena.purge()
            }
        }

        // MARK: Closing

        /// Stops making allocations; finishes the heap now if it holds nothing, otherwise when the last
        /// allocation is freed. Returns whether the heap is finished on return.
        package func close() -> Bool {
            // The closing reference, for the free that empties the heap; the caller's heap keeps the
            // core alive until the flag is set.
            let closing = Unmanaged.passRetained(self)
            let before = state.bitwiseOr(Self.closedFlag, ordering: .sequentiallyConsistent).oldValue
            if before & Self.closedFlag != 0 {
                closing.release()
            } else if before & Self.bytesMask == 0 {
                finish()
                closing.release()
            }
            return finished.load(ordering: .acquiring)
        }

        /// The ``AppHeap`` is deinitialized: finishes the heap if it holds nothing, otherwise leaves
        /// the core to its buffers, the last of which finishes it.
        func heapReleased() {
            let buffers = Unmanaged.passRetained(self)
            let after = state.wrappingSubtract(Self.heldFlag, ordering: .sequentiallyConsistent).newValue
            if after & Self.bytesMask == 0 {
                finish()
                buffers.release()
            }
        }

        /// Destroys the own arena (if jemalloc refuses, a thread bound to it, its pages are at least
        /// purged, and the index is left unused) and purges the pool arena; once.
        private func finish() {
            ownArenaLock.withLock { _ in
                guard !finished.load(ordering: .relaxed) else { return }
                if let ownArena {
                    do {
                        try ownArena.destroy()
                    } catch {
                        try? ownArena.purge()
                    }
                    HeapArenaPolicy.returnOwnArena()
                }
                try? pool.purge(slot)
                finished.store(true, ordering: .releasing)
            }
        }

        deinit {
            // The heap is gone and nothing is counted: whoever saw that finished the heap already.
            finish()
        }
    }
}

/// A buffer in an app's ``AppHeap``, such as an image's or a media frame's payload.
///
/// The buffer keeps what its heap needs to free its bytes (and so its arena) alive, and frees its
/// bytes before letting go of it, so its memory is valid for as long as anything can reach it, even
/// after its app is terminated or its heap is dropped. Access to the bytes is serialised by the
/// buffer's lock, which the thread holding it may take again: an access nested in another on the
/// same thread runs at once.
///
/// A buffer of 256 bytes or less is a single object, its bytes inside it (allocated
/// with `malloc`, like every Swift object, rather than in the heap's arena); a larger one holds
/// bytes in the heap's arena.
public final class HeapBuffer: Sendable {
    // No stored properties: the object is made by `ManagedBufferPointer`, with the `Header` and,
    // in the tail, the lock, the thread that holds it, and an inline buffer's bytes (from the first
    // address aligned to 16 after them).

    /// A buffer's fields.
    package struct Header {
        package let byteCount: Int
        /// The heap's core, unretained: the buffer's bytes, counted in it, keep it alive.
        package let core: Unmanaged<AppHeap.Core>
        /// The bytes when they live in an arena; nil when they are inline.
        let external: UnsafeMutableRawPointer?
        /// The index of the heap's own arena the external bytes live in, or ``AppHeap/Core/noArena``
        /// for its pool arena.
        let ownArenaIndex: UInt32
    }

    /// The tail's unit. Aligned to 8, not 16: the Swift runtime allocates an object whose alignment
    /// passes 8 with `posix_memalign` on Linux (its `MALLOC_ALIGN_MASK` test reads `__LP64`, which
    /// compilers do not define), about twice the cost of `malloc`. The inline bytes start at the
    /// first address aligned to 16 after the lock and its holder, `inlineOffset` into the tail.
    typealias Chunk = UInt64
    typealias Storage = ManagedBufferPointer<Header, Chunk>

    /// Where the holder of the lock is kept, from the tail's start: after the lock, which takes at
    /// most 8 bytes.
    private static let holderOffset = 8
    /// Where the tail starts in the object: after Swift's object header (two words) and the
    /// ``Header``, at the chunks' alignment. Objects are allocated 16-aligned.
    private static let tailOffset = (16 + MemoryLayout<Header>.size + MemoryLayout<Chunk>.alignment - 1) & ~(MemoryLayout<Chunk>.alignment - 1)
    /// Where an inline buffer's bytes start, from the tail's start: the first offset aligned to 16
    /// in the object after the lock and its holder.
    private static let inlineOffset = (tailOffset + holderOffset + MemoryLayout<Atomic<UInt>>.size + 15) & ~15 - tailOffset

    /// The largest buffer kept inline.
    static let inlineLimit = 256

    /// A buffer of `byteCount` bytes inside the object, already admitted in `core`'s heap.
    @inline(__always)
    package static func make(inline byteCount: Int, zeroed: Bool, core: AppHeap.Core) -> HeapBuffer {
        let buffer = make(Header(byteCount: byteCount, core: .passUnretained(core), external: nil, ownArenaIndex: AppHeap.Core.noArena), chunks: (inlineOffset + byteCount + 7) >> 3)
        if zeroed { buffer.bytes.initializeMemory(as: UInt8.self, repeating: 0) }
        return buffer
    }

    /// A buffer of `byteCount` bytes at `base`, allocated in `ownArena` or, when nil, in `core`'s
    /// pool arena.
    package static func make(_ base: UnsafeMutableRawPointer, byteCount: Int, ownArena: Arena?, core: AppHeap.Core) -> HeapBuffer {
        make(Header(byteCount: byteCount, core: .passUnretained(core), external: base, ownArenaIndex: ownArena?.index ?? AppHeap.Core.noArena), chunks: (holderOffset + MemoryLayout<Atomic<UInt>>.size) >> 3)
    }

    @inline(__always)
    private static func make(_ header: Header, chunks: Int) -> HeapBuffer {
        assert(MemoryLayout<Mutex<Void>>.size <= holderOffset && MemoryLayout<Mutex<Void>>.alignment <= MemoryLayout<Chunk>.alignment)
        let storage = Storage(bufferClass: HeapBuffer.self, minimumCapacity: chunks) { _, _ in header }
        storage.withUnsafeMutablePointerToElements { chunks in
            UnsafeMutableRawPointer(chunks).bindMemory(to: Mutex<Void>.self, capacity: 1).initialize(to: Mutex(()))
            (UnsafeMutableRawPointer(chunks) + holderOffset).bindMemory(to: Atomic<UInt>.self, capacity: 1).initialize(to: Atomic(0))
        }
        let buffer = unsafeDowncast(storage.buffer, to: HeapBuffer.self)
        assert(Int(bitPattern: buffer.lock) - Int(bitPattern: Unmanaged.passUnretained(buffer).toOpaque()) == tailOffset)
        return buffer
    }

    /// The buffer's fields.
    private var header: UnsafeMutablePointer<Header> {
        Storage(unsafeBufferObject: self).withUnsafeMutablePointerToHeader { $0 }
    }

    /// The lock, at the tail's start. A plain `Mutex`, not a ``/MemoryPressureRuntime/LibraryLock``: it is the caller's
    /// own exclusive access to its bytes, held across the caller's code (``withUnsafeBytes(_:)``,
    /// a backing store's renderer) as a `Mutex` of its own would be, not a lock of the library's
    /// bookkeeping.
    private var lock: UnsafeMutablePointer<Mutex<Void>> {
        Storage(unsafeBufferObject: self).withUnsafeMutablePointerToElements {
            UnsafeMutableRawPointer($0).assumingMemoryBound(to: Mutex<Void>.self)
        }
    }

    /// The thread that holds the lock (`PosixThread.current`), or 0: written only by that thread,
    /// under the lock.
    private var holder: UnsafeMutablePointer<Atomic<UInt>> {
        Storage(unsafeBufferObject: self).withUnsafeMutablePointerToElements {
            (UnsafeMutableRawPointer($0) + Self.holderOffset).assumingMemoryBound(to: Atomic<UInt>.self)
        }
    }

    /// The bytes, inline (after the lock and its holder) or in an arena: valid while the buffer
    /// lives.
    private var bytes: UnsafeMutableRawBufferPointer {
        Storage(unsafeBufferObject: self).withUnsafeMutablePointers { header, chunks in
            let inline = UnsafeMutableRawPointer(chunks) + Self.inlineOffset
            return UnsafeMutableRawBufferPointer(start: header.pointee.external ?? inline, count: header.pointee.byteCount)
        }
    }

    /// Runs `body` holding the lock; at once when the calling thread holds it already (an access
    /// nested in another). Only the holder writes `holder`, so a thread reads its own identity
    /// there only while it holds the lock.
    @inline(__always)
    private func withAccess<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let thread = PosixThread.current
        if holder.pointee.load(ordering: .relaxed) == thread { return try body() }
        return try lock.pointee.withLock { _ throws(Failure) -> Result in
            holder.pointee.store(thread, ordering: .relaxed)
            defer { holder.pointee.store(0, ordering: .relaxed) }
            return try body()
        }
    }

    /// The number of bytes.
    public var byteCount: Int { header.pointee.byteCount }

    /// The heap the bytes live in, while it lives.
    package var heap: AppHeap? { header.pointee.core.takeUnretainedValue().heap }

    /// Calls `body` with the bytes, to read them, while no other thread accesses them.
    ///
    /// Accesses from different threads are exclusive: one on another thread waits for `body` to
    /// return. An access nested in `body`, on the same thread (reading the buffer again, or
    /// comparing it with itself), runs at once, inside this one.
    ///
    /// - Parameter body: Reads the bytes; the pointer is valid only inside it.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withUnsafeBytes<Result: Sendable, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let bytes = bytes
        return try withAccess { () throws(Failure) -> Result in
            try callOut { () throws(Failure) -> Result in try body(UnsafeRawBufferPointer(bytes)) }
        }
    }

    /// Calls `body` with the bytes, to write them, while no other thread accesses them.
    ///
    /// Accesses from different threads are exclusive, as in `withUnsafeBytes(_:)`; an access
    /// nested in `body` on the same thread runs at once, inside this one.
    ///
    /// - Parameter body: Writes the bytes; the pointer is valid only inside it.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withUnsafeMutableBytes<Result: Sendable, Failure: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let bytes = bytes
        return try withAccess { () throws(Failure) -> Result in
            try callOut { () throws(Failure) -> Result in try body(bytes) }
        }
    }

    deinit {
        let header = header.pointee
        // Unretained: the bytes still counted keep the core alive; it may be gone after the call.
        header.core._withUnsafeGuaranteedRef { core in
            if let external = header.external {
                core.free(external, byteCount: header.byteCount, in: header.ownArenaIndex == AppHeap.Core.noArena ? nil : Arena(index: header.ownArenaIndex))
            } else {
                // The inline bytes go with the object, right after this.
                core.uncount(header.byteCount)
            }
        }
        holder.deinitialize(count: 1)
        lock.deinitialize(count: 1)
    }
}
