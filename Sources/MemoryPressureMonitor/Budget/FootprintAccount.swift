#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import Synchronization
import MemoryPressureRuntime
import MemoryPressureMeasurement

// How the budget holds for app heaps: every heap allocation is admitted here before jemalloc is
// asked for it, so the process's footprint is known at the allocation that changes it, without a
// lock and without waiting for a sample. The footprint is what the last sample saw outside the heaps
// plus every heap's bytes now. An allocation that crosses the warning or critical threshold wakes
// the monitor at once; one that would pass the budget waits, bounded, for the ladder to make room.

/// The process's footprint between samples, and the admission of app-heap allocations against the
/// budget, as cgroup v2 throttles at `memory.high` and refuses at `memory.max`.
@usableFromInline
package final class FootprintAccount: Sendable {
    /// Why an allocation was refused.
    package enum Refusal: Sendable {
        case hardLimit(Int, heapBytes: Int)
        /// Past the budget, and no room made within the admission wait.
        case budget
        /// Past the budget, and the waiting task was cancelled before room was made.
        case budgetWaitCancelled
        /// Past the budget, on the reclamation thread, which cannot wait for the room it makes.
        case budgetOnReclamationThread
    }

    /// Heap bytes admitted: live buffers, allocations under way, and the bytes the threads'
    /// ``ChargeStock``s hold charged ahead.
    @usableFromInline let admitted = Atomic<Int>(0)
    /// Heap bytes admitted whose pages are not yet faulted in: large allocations under way. Small
    /// ones count as resident from their admission, so they cost one atomic add here, not two.
    @usableFromInline let underWay = Atomic<Int>(0)
    /// The last sample's footprint less the heap bytes resident then: what lives outside the heaps.
    @usableFromInline let outsideHeaps = Atomic<Int>(0)
    /// Whether the budget is held: while the system runs, when samples keep the account current
    /// and the ladder can make room. Hard limits hold at all times.
    @usableFromInline let holdsBudget = Atomic<Bool>(false)
    /// The earliest threshold crossing on the allocation path that the ladder has not claimed, and
    /// the threshold it crossed. Rare (crossings only), so a lock costs nothing.
    private let crossing = LibraryLock<(time: ContinuousClock.Instant, thresholdBytes: Int)?>(nil)
    /// Whether ``crossing`` holds one: read without the lock on the faulting path.
    private let crossingUnclaimed = Atomic<Bool>(false)

    private struct Refusals {
        var counts: [AppIdentifier: Int] = [:]
        /// Whether this episode (since the footprint was last under the warning threshold) has
        /// been logged.
        var logged = false
    }

    private let refusals = LibraryLock(Refusals())
    /// The budget's bytes and its warning and critical thresholds, which follow the cgroup's limit
    /// (``setBudget(_:)``): read with relaxed loads on the allocation path.
    private let budgetBytes: Atomic<Int>
    private let warningThreshold: Atomic<Int>
    private let criticalThreshold: Atomic<Int>
    /// ``ChargeStock/key``, read once.
    @usableFromInline let stockKey = ChargeStock.key
    private let admissionWait: Duration
    private let logger: Logger
    /// Asks the monitor for a sample now; set once the monitor exists.
    private let wake = LibraryLock<(@Sendable () -> Void)?>(nil)
    /// Told of every refusal.
    private let onRefusal: @Sendable (AppIdentifier, Int) -> Void
    /// Where allocations over the budget wait for room: signalled whenever the footprint may fall.
    @usableFromInline let room: RoomSignal
    /// The time crossings are noted at and admissions wait on: the timers' clock.
    private let clock: any LibraryClock

    /// An account of `budget` whose admissions wait on the clock of `timers` (suspended ones bounded
    /// by its deadlines), and whose crossings are noted at its time.
    package init(
        budget: MemoryBudget, admissionWait: Duration, timers: DeadlineTimers, logger: Logger,
        onRefusal: @escaping @Sendable (AppIdentifier, Int) -> Void
    ) {
        room = RoomSignal(timers: timers)
        clock = timers.clock
        budgetBytes = Atomic(budget.totalBytes)
        warningThreshold = Atomic(budget.bytes(enteringAbove: .warning))
        criticalThreshold = Atomic(budget.bytes(enteringAbove: .critical))
        self.admissionWait = admissionWait
        self.logger = logger
        self.onRefusal = onRefusal
    }

    /// Has `wake` called whenever an allocation crosses a threshold or meets the budget.
    package func wake(with wake: @escaping @Sendable () -> Void) {
        self.wake.withLock { $0 = wake }
    }

    /// Admits against `budget` from now on.
    func setBudget(_ budget: MemoryBudget) {
        budgetBytes.store(budget.totalBytes, ordering: .relaxed)
        warningThreshold.store(budget.bytes(enteringAbove: .warning), ordering: .relaxed)
        criticalThreshold.store(budget.bytes(enteringAbove: .critical), ordering: .relaxed)
        room.signal()
    }

    private var warningBytes: Int { warningThreshold.load(ordering: .relaxed) }
    private var criticalBytes: Int { criticalThreshold.load(ordering: .relaxed) }

    /// Starts or stops holding allocations to the budget (hard limits hold at all times).
    package func holdBudget(_ holds: Bool) {
        holdsBudget.store(holds, ordering: .relaxed)
    }

    /// The footprint now: outside the heaps as last sampled, plus the heaps' admitted bytes.
    package var footprintBytes: Int {
        outsideHeaps.load(ordering: .relaxed) + admitted.load(ordering: .relaxed)
    }

    // MARK: The allocation path

    /// Bytes a thread's ``ChargeStock`` takes from the account at a time for small allocations;
    /// the stock gives back what passes twice this. The account's footprint is higher than what
    /// the heaps hold by at most the stocks (up to twice this per thread that allocates or frees
    /// in a heap): the budget is held a little early, never late.
    @usableFromInline static let stockBatch = 32 << 10

    /// Admits `bytes` more in `heap`, which counted them within its hard limit: while the budget is
    /// held, wakes the monitor when a threshold is crossed, and past the budget waits for room for
    /// up to the admission wait, then refuses. Counts the bytes as admitted, and as resident at once unless `faultedInLater`
    /// (then ``commit(_:)`` counts them as their pages are faulted in).
    ///
    /// Small allocations (not `faultedInLater`) are taken from the calling thread's stock of bytes
    /// charged ahead, without touching the shared counters; the stock is refilled a batch at a time,
    /// and only where the batch crosses no threshold: near one, each allocation is judged alone.
    /// The app's identifier is asked of `app` only when the allocation must wait, so that the way
    /// in retains nothing.
    @inlinable
    package func admit(_ bytes: Int, faultedInLater: Bool, for app: () -> AppIdentifier) throws(MemoryPressureError) {
        if !faultedInLater, admitFromStock(bytes) { return }
        guard let after = count(bytes, faultedInLater: faultedInLater), passesBudget(bytes, footprintAfter: after) else { return }
        try waitForRoom(bytes, app: app(), faultedInLater: faultedInLater)
    }

    /// As ``admit(_:faultedInLater:for:)``, for an allocation whose wait for room suspends its task
    /// instead of blocking its thread; the wait also ends, refused, when the task is cancelled.
    package func admitSuspending(_ bytes: Int, app: AppIdentifier, faultedInLater: Bool) async throws(MemoryPressureError) {
        if !faultedInLater, admitFromStock(bytes) { return }
        guard let after = count(bytes, faultedInLater: faultedInLater), passesBudget(bytes, footprintAfter: after) else { return }
        try prepareToWait(bytes, app: app, faultedInLater: faultedInLater)
        let hasRoom = await room.waitSuspending(atMost: admissionWait) { footprintBytes <= budgetBytes.load(ordering: .relaxed) }
        guard hasRoom else {
            throw withdrawAndRefuse(bytes, app: app, faultedInLater: faultedInLater, Task.isCancelled ? .budgetWaitCancelled : .budget)
        }
    }

    /// Takes small `bytes` from the calling thread's stock of bytes charged ahead, refilling it
    /// when it may; false when they must be judged alone.
    @inlinable
    func admitFromStock(_ bytes: Int) -> Bool {
        let stock = ChargeStock.current(stockKey)
        if stock.pointee.bytes >= bytes, stock.pointee.isCharged(to: self) {
            stock.pointee.bytes -= bytes
            return true
        }
        return refill(stock, taking: bytes)
    }

    /// Counts `bytes` as admitted; returns the footprint with them while the budget is held, nil
    /// while it is not.
    @inlinable
    func count(_ bytes: Int, faultedInLater: Bool) -> Int? {
        if faultedInLater { underWay.wrappingAdd(bytes, ordering: .relaxed) }
        let after = admitted.wrappingAdd(bytes, ordering: .relaxed).newValue + outsideHeaps.load(ordering: .relaxed)
        return holdsBudget.load(ordering: .relaxed) ? after : nil
    }

    /// Charges `bytes` and a batch to `stock`, giving back what it held, and takes `bytes` from it;
    /// false (nothing charged) when, with the budget held, the charge would cross a threshold or
    /// pass the budget.
    @inline(never) @usableFromInline
    func refill(_ stock: UnsafeMutablePointer<ChargeStock>, taking bytes: Int) -> Bool {
        stock.pointee.drain()
        let charge = bytes + Self.stockBatch
        let after = admitted.wrappingAdd(charge, ordering: .relaxed).newValue + outsideHeaps.load(ordering: .relaxed)
        if holdsBudget.load(ordering: .relaxed) {
            let before = after - charge
            guard after <= budgetBytes.load(ordering: .relaxed), before >= criticalBytes || after < criticalBytes,
                  before >= warningBytes || after < warningBytes else {
                admitted.wrappingSubtract(charge, ordering: .relaxed)
                return false
            }
        }
        stock.pointee.refill(Self.stockBatch, chargedTo: self)
        return true
    }

    /// The budget's part of admission, once `bytes` are counted and the footprint is `after`: wakes
    /// the monitor at a threshold crossed, and tells whether the footprint is past the budget (the
    /// allocation must then wait for room).
    @usableFromInline
    func passesBudget(_ bytes: Int, footprintAfter after: Int) -> Bool {
        let before = after - bytes
        if after > budgetBytes.load(ordering: .relaxed) {
            noteCrossing(of: criticalBytes)
            return true
        } else if before < criticalBytes && after >= criticalBytes {
            noteCrossing(of: criticalBytes)
        } else if before < warningBytes && after >= warningBytes {
            noteCrossing(of: warningBytes)
        }
        return false
    }

    /// Uncounts `bytes` that found no room, and returns their refusal.
    private func withdrawAndRefuse(_ bytes: Int, app: AppIdentifier, faultedInLater: Bool, _ refusal: Refusal) -> MemoryPressureError {
        withdraw(bytes, faultedInLater: faultedInLater)
        return refuse(bytes, app: app, refusal)
    }

    /// `bytes` admitted to be faulted in later are allocated and their pages resident. While a
    /// crossing waits for the ladder to claim it, the faulting thread gives up its core after each
    /// chunk, so that the monitor and the ladder are not kept waiting behind the page faults.
    package func commit(_ bytes: Int) {
        underWay.wrappingSubtract(bytes, ordering: .relaxed)
        if crossingUnclaimed.load(ordering: .relaxed) { sched_yield() }
    }

    /// `bytes` of a large buffer were freed. Its pages stay resident in its arena until jemalloc's
    /// decay or a purge returns them, so they count as outside the heaps until the next sample
    /// measures what is resident: the room a free makes is room a sample has seen, and the budget
    /// is held a little early, never late. (Counted as heap bytes no longer, they would let another
    /// app's arena fault in as much again before that sample: an overshoot of the bytes freed and
    /// re-allocated within one sampling interval.)
    package func releaseLarge(_ bytes: Int) {
        outsideHeaps.wrappingAdd(bytes, ordering: .relaxed)
        admitted.wrappingSubtract(bytes, ordering: .relaxed)
    }

    /// `bytes` admitted were not allocated after all (none of them committed).
    package func withdraw(_ bytes: Int, faultedInLater: Bool) {
        if faultedInLater { underWay.wrappingSubtract(bytes, ordering: .relaxed) }
        admitted.wrappingSubtract(bytes, ordering: .relaxed)
        room.signal()
    }

    /// `bytes` of resident heap memory were freed: into the calling thread's stock when it is
    /// charged to this account, which gives back what passes twice a batch.
    @inlinable
    package func release(_ bytes: Int) {
        let stock = ChargeStock.current(stockKey)
        guard stock.pointee.isCharged(to: self) else {
            admitted.wrappingSubtract(bytes, ordering: .relaxed)
            room.signal()
            return
        }
        stock.pointee.bytes += bytes
        if stock.pointee.bytes > 2 * Self.stockBatch {
            admitted.wrappingSubtract(stock.pointee.bytes - Self.stockBatch, ordering: .relaxed)
            stock.pointee.bytes = Self.stockBatch
            room.signal()
        }
    }

    /// `bytes` a thread's stock held are uncharged.
    func giveBack(_ bytes: Int) {
        admitted.wrappingSubtract(bytes, ordering: .relaxed)
        room.signal()
    }

    /// Sleeps until the admitted bytes fit in the budget, woken by every free, sample and budget
    /// change; when the admission wait passes first, uncounts `bytes` and refuses them. On the
    /// reclamation thread, which makes the room, refuses them at once.
    @inline(never) @usableFromInline
    func waitForRoom(_ bytes: Int, app: AppIdentifier, faultedInLater: Bool) throws(MemoryPressureError) {
        try prepareToWait(bytes, app: app, faultedInLater: faultedInLater)
        let hasRoom = room.wait(atMost: admissionWait) { footprintBytes <= budgetBytes.load(ordering: .relaxed) }
        guard hasRoom else { throw withdrawAndRefuse(bytes, app: app, faultedInLater: faultedInLater, .budget) }
    }

    /// Readies `bytes` past the budget to wait for room: refuses them at once on the reclamation
    /// thread, which makes the room and so cannot wait for it; otherwise gives back the calling
    /// thread's stock, which is room the waiting allocation would hold.
    private func prepareToWait(_ bytes: Int, app: AppIdentifier, faultedInLater: Bool) throws(MemoryPressureError) {
        guard RoomSignal.mayWaitOnThisThread else {
            throw withdrawAndRefuse(bytes, app: app, faultedInLater: faultedInLater, .budgetOnReclamationThread)
        }
        let stock = ChargeStock.current(stockKey)
        if stock.pointee.isCharged(to: self) { stock.pointee.drain() }
    }

    /// Records that the footprint crossed `thresholdBytes` now, unless an earlier crossing is
    /// unclaimed, and wakes the monitor.
    private func noteCrossing(of thresholdBytes: Int) {
        // Read before the lock: a manual clock's time is behind a lock of its own.
        let now = clock.now
        crossing.withLock { crossing in
            if crossing == nil { crossing = (now, thresholdBytes) }
        }
        crossingUnclaimed.store(true, ordering: .relaxed)
        wake.withLock { $0 }?()
        // Let the woken monitor run now rather than when this thread next gives up its core (a
        // kernel without preemption would otherwise keep it waiting while this allocation faults
        // its pages in). Only crossings pay this.
        sched_yield()
    }

    /// Records and logs the refusal of `bytes` for `app`, and returns its error.
    package func refuse(_ bytes: Int, app: AppIdentifier, _ refusal: Refusal) -> MemoryPressureError {
        let footprint = footprintBytes
        let firstInEpisode = refusals.withLock { refusals in
            refusals.counts[app, default: 0] += 1
            defer { refusals.logged = true }
            return !refusals.logged
        }
        let error: MemoryPressureError = switch refusal {
        case .hardLimit(let limit, let heapBytes): .heapOverHardLimit(app: app, bytes: bytes, heapBytes: heapBytes, hardLimit: limit)
        case .budget:
            .heapOverBudget(app: app, bytes: bytes, footprintBytes: footprint, budgetBytes: budgetBytes.load(ordering: .relaxed), waitEnded: "no room was made within \(admissionWait)")
        case .budgetWaitCancelled:
            .heapOverBudget(app: app, bytes: bytes, footprintBytes: footprint, budgetBytes: budgetBytes.load(ordering: .relaxed), waitEnded: "its task was cancelled before room was made")
        case .budgetOnReclamationThread:
            .heapOverBudget(
                app: app, bytes: bytes, footprintBytes: footprint, budgetBytes: budgetBytes.load(ordering: .relaxed),
                waitEnded: "it was made on the reclamation thread (an observer of the system's events, an eviction handler or a discard callback run there), which cannot wait for the room it makes"
            )
        }
        if firstInEpisode {
            logger.notice("refused an app-heap allocation", metadata: ["app": "\(app)", "bytes": "\(bytes)", "reason": "\(error)"])
        }
        onRefusal(app, bytes)
        return error
    }

    // MARK: Samples

    /// The heap counters as they stand before a sample's sources are read.
    package struct Snapshot {
        fileprivate let admitted: Int
        fileprivate let resident: Int
    }

    /// Reads the counters; taken before the sources, so that pages faulted in meanwhile count as
    /// outside the heaps (too much, never too little).
    package func snapshot() -> Snapshot {
        let admitted = admitted.load(ordering: .relaxed)
        return Snapshot(admitted: admitted, resident: max(0, admitted - underWay.load(ordering: .relaxed)))
    }

    /// Completes `sample` with the heaps' bytes, folds allocations still under way into its
    /// footprint, and takes what it shows outside the heaps as the account's new base.
    func complete(_ sample: inout MemorySample, from snapshot: Snapshot) {
        sample.heapBytes = snapshot.admitted
        sample.heapBytesUnderWay = snapshot.admitted - snapshot.resident
        guard let own = sample.measuredResidentBytes else { return }
        let measured = own + sample.controlGroupExcessBytes + (sample.processAppBytes ?? 0)
        outsideHeaps.store(max(0, measured - snapshot.resident), ordering: .relaxed)
        let footprint = measured + sample.heapBytesUnderWay
        // A crossing the sample does not bear out (the bytes were freed before it) began nothing.
        let dropped = crossing.withLock { crossing -> Bool in
            guard let crossed = crossing, footprint < crossed.thresholdBytes else { return false }
            crossing = nil
            return true
        }
        if dropped { crossingUnclaimed.store(false, ordering: .relaxed) }
        if footprint < warningBytes {
            refusals.withLock { $0.logged = false }
        }
        room.signal()
    }

    // MARK: The ladder

    /// The earliest threshold crossing seen on the allocation path since the last claim, and
    /// forgets it.
    package func claimCrossing() -> ContinuousClock.Instant? {
        crossingUnclaimed.store(false, ordering: .relaxed)
        return crossing.withLock { $0.take()?.time }
    }

    /// Refused allocations so far, by app.
    package var refusedAllocations: [AppIdentifier: Int] {
        refusals.withLock { $0.counts }
    }
}
