import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// An allocation past the budget made on the reclamation thread, where the service's observers of
/// the system's events, eviction handlers and discard callbacks run while the ladder works. In the
/// heap admission suite, which runs alone, as the footprints it measures need.
extension HeapAdmissionTests {
    /// The room such an allocation would wait for can only come from the ladder, which its wait
    /// would hold up: it waited the whole admission wait (here a minute) on the ladder's thread,
    /// and was refused at its end. It is now refused at once, saying why.
    @Test func anAllocationPastTheBudgetOnTheReclamationThreadIsRefusedAtOnce() async throws {
        let (system, active, heap, held) = try await Self.activeAppHolding64MiB(admissionWait: .seconds(60))
        let outcome = SharedBox<Result<Int, MemoryPressureError>?>(nil)
        let observation = system.events.observe { event in
            guard case .ladderRun = event, outcome.value == nil else { return }
            do throws(MemoryPressureError) {
                outcome.value = .success(try heap.allocate(byteCount: 256 * mebibyte).byteCount)
            } catch {
                outcome.value = .failure(error)
            }
        }
        defer { observation.cancel() }

        try await system.running {
            // Once the account knows the footprint outside the heaps.
            #expect(await system.monitor.sampled() != nil)
            // 64 MiB held and 128 MiB more cross the warning threshold: the ladder runs.
            let crossing = try heap.allocate(byteCount: 128 * mebibyte)
            _ = await eventually { outcome.value != nil }
            withExtendedLifetime(crossing) {}
        }

        guard case .failure(let error) = try #require(outcome.value) else {
            Issue.record("the allocation on the reclamation thread was admitted: \(String(describing: outcome.value))")
            return
        }
        #expect(error.code == .allocationRefused)
        #expect(error.app == active.identifier)
        #expect(error.description.contains("made on the reclamation thread"))
        #expect(heap.allocatedBytes == 64 * mebibyte)
        #expect(system.refusedAllocations == [active.identifier: 1])
        withExtendedLifetime(held) {}
    }
}
