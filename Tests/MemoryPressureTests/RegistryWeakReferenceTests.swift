import Dispatch
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Synchronization
import Testing

/// The registry holds caches and stores weakly; reading those references under its lock takes
/// strong ones, the last of which may be the registry's when the owner lets go meanwhile. The
/// object's deinitializer, its owner's code, must then run outside the lock.
@Suite struct RegistryWeakReferenceTests {
    /// A cache of the caller's own whose deinitializer uses the registry, as the deinitializer of a
    /// cache that unregisters a metric or logs its owner's footprint would.
    final class CacheUsingTheRegistryAsItGoes: Purgeable {
        let registry: PurgeRegistry
        let deinits: SharedBox<Int>

        init(registry: PurgeRegistry, deinits: SharedBox<Int>) {
            self.registry = registry
            self.deinits = deinits
        }

        deinit {
            _ = registry.footprint(of: owner)
            deinits.update { $0 += 1 }
        }

        var name: String { "uses the registry as it goes" }
        var owner: AppIdentifier { .test("owner") }
        var category: CacheCategory { .images }
        var payloadLocation: PayloadLocation { .elsewhere }
        var totalCost: Int { 1 }
        var count: Int { 1 }

        func purge(for event: PurgeEvent) -> CachePurgeResult { CachePurgeResult() }
    }

    /// One thread registers caches (each registration reads every registered cache's weak
    /// reference under the lock) while another lets go of them: a cache whose last reference was
    /// the registry's read ran its deinitializer under the lock, and the footprint it reads there
    /// trapped ("Recursive call to lock Mutex"), ending the process.
    @Test func aCacheLetGoOfWhileTheRegistryReadsItDeinitializesOutsideTheLock() async {
        let registry = PurgeRegistry()
        let deinits = SharedBox(0)
        let rounds = 5_000
        // Each cache goes from the registering thread to the releasing one through this box.
        let handedOver = Mutex<[CacheUsingTheRegistryAsItGoes]>([])
        let done = Atomic<Bool>(false)
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) {
                for _ in 0..<rounds {
                    let cache = CacheUsingTheRegistryAsItGoes(registry: registry, deinits: deinits)
                    registry.register(cache)
                    handedOver.withLock { $0.append(cache) }
                }
                done.store(true, ordering: .releasing)
            }
            DispatchQueue.global().async(group: group) {
                while true {
                    let finished = done.load(ordering: .acquiring)
                    // Let go one at a time, so each release may meet a registration's read.
                    while let cache = handedOver.withLock({ $0.popLast() }) { _ = cache }
                    if finished { break }
                }
            }
            group.notify(queue: .global()) { finished.resume() }
        }
        registry.pruneReleased(.test("owner"))
        #expect(deinits.value == rounds)
        #expect(registry.caches(of: .test("owner")).isEmpty)
    }
}
