@_spi(AppHeaps) import Jemalloc
import Synchronization
import MemoryPressureRuntime
import MemoryPressureMonitor

/// Every app's heap, caches and stores, so the system can measure each app and purge them by event.
///
/// Caches and stores are held weakly: they stay registered while their owners keep them. A weak
/// reference read under the registry's lock takes a strong one, which can turn out to be the last
/// when another thread lets go of the object meanwhile: every such read hands its references out of
/// the lock, so that a cache's or store's deinitializer (its owner's code) never runs under it.
package final class PurgeRegistry: Sendable {
    private struct WeakCache {
        weak var cache: (any Purgeable)?
    }

    private struct WeakStore {
        weak var store: (any ReleasableStore)?
    }

    private struct AppEntries {
        var heap: AppHeap?
        /// The most bytes the app's heap may hold in the app's current state.
        var hardLimit: Int?
        var caches: [WeakCache] = []
        var stores: [WeakStore] = []

        /// The caches and stores read from their weak references.
        typealias Live = (caches: [any Purgeable], stores: [any ReleasableStore])

        /// Drops the caches and stores that are gone; returns the live ones, for the caller to let
        /// go of after the lock.
        mutating func prune() -> Live {
            var live: Live = ([], [])
            caches.removeAll { entry in
                guard let cache = entry.cache else { return true }
                live.caches.append(cache)
                return false
            }
            stores.removeAll { entry in
                guard let store = entry.store else { return true }
                live.stores.append(store)
                return false
            }
            return live
        }
    }

    private let apps = LibraryLock<[AppIdentifier: AppEntries]>([:])
    /// Caches, stores and heaps registered or made so far: a change the ladder waits for when it
    /// rests.
    private let registrationCount = Atomic<Int>(0)
    /// Where the heaps' allocations are admitted, when a memory system keeps an account.
    private let account: FootprintAccount?
    /// When the heaps take arenas of their own.
    private let heapArenas: HeapArenaPolicy
    /// The budget in force, which caches sized by it follow; 0 outside a memory system.
    private let budgetBytes: Atomic<Int>
    /// What counts in apps' footprints beyond their heaps and stores (the process apps' children), when a memory system has it.
    private let processes: (any FootprintContributor)?

    /// An empty registry whose heaps admit their allocations through `account`, when given (none:
    /// they belong to no memory system's account), whose caches sized by the budget take
    /// `budgetBytes`, and whose footprints count `processes`.
    package init(account: FootprintAccount? = nil, budgetBytes: Int = 0, heapArenas: HeapArenaPolicy = .standard, processes: (any FootprintContributor)? = nil) {
        self.processes = processes
        self.account = account
        self.budgetBytes = Atomic(budgetBytes)
        self.heapArenas = heapArenas
    }

    /// `app`'s heap, created on first use.
    ///
    /// The heap is made outside the registry's lock (in the shared arena pool, with no epoch
    /// refresh), so making one costs the same however many apps there are.
    package func heap(for app: AppIdentifier) throws(JemallocError) -> AppHeap {
        if let heap = apps.withLock({ $0[app]?.heap }) { return heap }
        let made = try AppHeap(app: app, account: account, policy: heapArenas)
        return apps.withLock { apps in
            // Another thread may have made one meanwhile; the first one stays.
            if let heap = apps[app]?.heap { return heap }
            made.setHardLimit(apps[app]?.hardLimit)
            apps[app, default: AppEntries()].heap = made
            registrationCount.add(1, ordering: .relaxed)
            return made
        }
    }

    /// Pages `app`'s heap's large allocations out to swap (see
    /// ``AppHeap/Core/pageOutLargeAllocations()``); the bytes advised, or nil when it has no heap.
    package func pageOutHeap(of app: AppIdentifier) throws(MemoryPressureError) -> Int? {
        guard let heap = apps.withLock({ $0[app]?.heap }) else { return nil }
        return try heap.core.pageOutLargeAllocations()
    }

    /// Holds `app`'s heap, now and when it is made again, to at most `bytes` (nil: no limit).
    package func setHardLimit(_ bytes: Int?, for app: AppIdentifier) {
        apps.withLock { apps in
            guard bytes != nil || apps[app] != nil else { return }
            apps[app, default: AppEntries()].hardLimit = bytes
            apps[app]?.heap?.setHardLimit(bytes)
        }
    }

    /// Registers `cache` under its owner; a cache sized by the budget takes the budget in force.
    /// A cache registered already stays registered once, so it is counted and purged once.
    package func register(_ cache: any Purgeable) {
        registrationCount.add(1, ordering: .relaxed)
        // Read once, before the lock: a `Purgeable` of the caller's own computes it, and may use
        // the system as it does (read under the lock, a footprint read there trapped).
        let owner = callOut { cache.owner }
        // The live caches are let go of as this statement ends, outside the lock.
        _ = apps.withLock { apps in
            let live = apps[owner, default: AppEntries()].prune()
            if !live.caches.contains(where: { $0 === cache }) {
                apps[owner, default: AppEntries()].caches.append(WeakCache(cache: cache))
            }
            return live
        }
        let budget = budgetBytes.load(ordering: .relaxed)
        if budget > 0, let sized = cache as? any BudgetSized {
            sized.followBudget(budget)
        }
    }

    /// Has every registered cache sized by the budget follow `budget`: those whose limit shrinks
    /// are trimmed at once, outside the registry's lock.
    package func followBudget(_ budget: MemoryBudget) {
        budgetBytes.store(budget.totalBytes, ordering: .relaxed)
        let caches = apps.withLock { apps in
            apps.values.flatMap { $0.caches.compactMap(\.cache) }
        }
        for case let cache as any BudgetSized in caches {
            cache.followBudget(budget.totalBytes)
        }
    }

    /// Registers `store` under `app`, once however often it is registered there.
    package func register(_ store: any ReleasableStore, owner app: AppIdentifier) {
        registrationCount.add(1, ordering: .relaxed)
        // The live stores are let go of as this statement ends, outside the lock.
        _ = apps.withLock { apps in
            let live = apps[app, default: AppEntries()].prune()
            if !live.stores.contains(where: { $0 === store }) {
                apps[app, default: AppEntries()].stores.append(WeakStore(store: store))
            }
            return live
        }
    }

    /// How many caches, stores and heaps have been registered or made so far.
    package var registrations: Int { registrationCount.load(ordering: .relaxed) }

    /// The owners with a heap, a cache or a store registered.
    package var owners: Set<AppIdentifier> { apps.withLock { Set($0.keys) } }

    /// `app`'s live caches.
    package func caches(of app: AppIdentifier) -> [any Purgeable] {
        apps.withLock { $0[app]?.caches.compactMap(\.cache) ?? [] }
    }

    /// `app`'s footprint: its heap's live bytes (kept as buffers come and go, so current without an
    /// epoch refresh) plus the declared cost of its caches whose payloads live elsewhere, plus its
    /// process's, for a process app.
    package func footprint(of app: AppIdentifier) -> AppFootprint {
        let heapBytes = apps.withLock { $0[app]?.heap?.allocatedBytes } ?? 0
        let outside = caches(of: app).filter { $0.payloadLocation == .elsewhere }.reduce(0) { $0.addingClamped($1.totalCost) }
        let processBytes = processes?.footprintBytes(of: app) ?? 0
        return AppFootprint(heapBytes: heapBytes, declaredBytesOutsideHeap: outside, processBytes: processBytes)
    }

    /// Purges the caches and stores of `targets` for `event`, then, when `returningFreedPages`,
    /// returns the freed pages to the operating system: the arenas of the purged heaps (each pool
    /// arena once, however many heaps share it, and each heap's own arena), or every arena when
    /// payloads outside the heaps were released. A caller that purges every arena itself afterwards
    /// passes false.
    ///
    /// Caches apply their category's action; those of the apps in `suspended` are purged without
    /// running any of the app's code (no eviction handler, discardable content kept). Stores are
    /// released on entering the background, and on a warning or at critical pressure when their
    /// view is not visible.
    package func purge(
        _ event: PurgeEvent, apps targets: some Sequence<AppIdentifier>, returningFreedPages: Bool = true,
        quietlyFor suspended: Set<AppIdentifier> = []
    ) -> PurgeReport {
        var report = PurgeReport(event: event)
        var releasedOutsideHeaps = false
        var purgedHeaps: [AppHeap] = []
        for app in Set(targets) {
            let (heap, caches, stores) = apps.withLock { apps in
                let entries = apps[app]
                return (entries?.heap, entries?.caches.compactMap(\.cache) ?? [], entries?.stores.compactMap(\.store) ?? [])
            }
            let heapBytesBefore = heap?.allocatedBytes
            for cache in caches {
                let result = if suspended.contains(app), let quiet = cache as? any QuietlyPurgeable {
                    quiet.purgeQuietly(for: event)
                } else {
                    // A `Purgeable` of the caller's own runs its code here.
                    callOut { cache.purge(for: event) }
                }
                guard result.removedCount > 0 else { continue }
                releasedOutsideHeaps = releasedOutsideHeaps || cache.payloadLocation == .elsewhere
                report.entries.append(PurgeReport.Entry(
                    app: app,
                    source: .cache(name: cache.name, category: cache.category),
                    releasedBytes: result.releasedCost,
                    removedCount: result.removedCount
                ))
            }
            for store in stores where event == .enteringBackground || !store.isVisible {
                let released = store.release()
                guard released > 0 else { continue }
                report.entries.append(PurgeReport.Entry(app: app, source: .store, releasedBytes: released, removedCount: 1))
            }
            if let heap, let heapBytesBefore {
                report.heapBytesReturned[app] = heapBytesBefore - heap.allocatedBytes
                purgedHeaps.append(heap)
            }
        }
        guard returningFreedPages else { return report }
        if releasedOutsideHeaps {
            do { try Jemalloc.purgeAllArenas() } catch { report.arenaPurgeFailures.append(error) }
            return report
        }
        for slot in Set(purgedHeaps.map(\.poolSlot)) {
            do { try slot.arena.purge() } catch { report.arenaPurgeFailures.append(error) }
        }
        for heap in purgedHeaps {
            do { try heap.purgeOwnArena() } catch { report.arenaPurgeFailures.append(error) }
        }
        return report
    }

    /// Closes `app`'s heap and forgets it and the app's hard limit: the heap returns its pages now
    /// if nothing in it is alive, or when the last allocation is freed. Returns the closed heap, so
    /// the bytes still alive in it can be watched, or nil when the app had none. A later
    /// ``heap(for:)`` makes the app a new heap.
    ///
    /// The app's caches and stores stay registered while something keeps them (they are held
    /// weakly): those its code held go with it (``pruneReleased(_:)`` drops them once it has let
    /// go), and one kept elsewhere, past the app's termination, is still counted in its footprint
    /// and purged, as `MemorySystem.register(_:)` says. (They were forgotten: such a cache was
    /// neither counted nor purged again, after a relaunch too, and the termination's record counted
    /// its cost as returned.)
    @discardableResult
    package func removeApp(_ app: AppIdentifier) -> AppHeap? {
        // The live caches and stores are let go of as this statement ends, outside the lock.
        let (heap, _) = apps.withLock { apps -> (AppHeap?, AppEntries.Live) in
            defer { apps.shrinkIfSparse() }
            guard var entries = apps.removeValue(forKey: app) else { return (nil, ([], [])) }
            let live = entries.prune()
            if !entries.caches.isEmpty || !entries.stores.isEmpty {
                apps[app] = AppEntries(caches: entries.caches, stores: entries.stores)
            }
            return (entries.heap, live)
        }
        heap?.close()
        return heap
    }

    /// Drops `app`'s caches and stores that are gone, and its entry when nothing is left in it:
    /// called once a terminated app has let go of its memory, so that a terminated app costs
    /// nothing here unless something outside it keeps its caches or stores.
    package func pruneReleased(_ app: AppIdentifier) {
        // The live caches and stores are let go of as this statement ends, outside the lock.
        _ = apps.withLock { apps -> AppEntries.Live in
            guard var entries = apps.removeValue(forKey: app) else { return ([], []) }
            let live = entries.prune()
            if entries.heap != nil || entries.hardLimit != nil || !entries.caches.isEmpty || !entries.stores.isEmpty {
                apps[app] = entries
            } else {
                apps.shrinkIfSparse()
            }
            return live
        }
    }
}

/// The memory an app is charged with: its heap's bytes plus what its caches declare outside it, plus
/// its process's memory for a process app.
public struct AppFootprint: Hashable, Sendable {
    /// Bytes of the live buffers in the app's heap, as asked for (see ``AppHeap/allocatedBytes``).
    public var heapBytes: Int
    /// Declared cost of the app's cache entries whose payloads live outside its heap.
    public var declaredBytesOutsideHeap: Int
    /// A process app's process: its own memory cgroup's working set, or its resident set corrected
    /// by its proportional set; 0 for an in-process app.
    public var processBytes: Int

    /// A footprint of these parts, in bytes.
    package init(heapBytes: Int, declaredBytesOutsideHeap: Int, processBytes: Int = 0) {
        self.heapBytes = heapBytes
        self.declaredBytesOutsideHeap = declaredBytesOutsideHeap
        self.processBytes = processBytes
    }

    /// The footprint.
    public var totalBytes: Int { heapBytes.addingClamped(declaredBytesOutsideHeap).addingClamped(processBytes) }
}

extension AppFootprint: CustomStringConvertible {
    /// The footprint for people and logs: `12 MiB (heap 10 MiB, declared outside the heap 2 MiB)`.
    public var description: String {
        let process = processBytes > 0 ? ", process \(ByteCount(processBytes))" : ""
        return "\(ByteCount(totalBytes)) (heap \(ByteCount(heapBytes)), declared outside the heap \(ByteCount(declaredBytesOutsideHeap))\(process))"
    }
}
