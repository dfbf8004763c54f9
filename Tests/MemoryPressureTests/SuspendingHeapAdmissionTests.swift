#if canImport(Glibc)
import Glibc
#endif
import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import Testing

/// `AppHeap.allocateSuspending(byteCount:zeroed:)`: the allocation for async code, whose wait for
/// room suspends its task instead of blocking a thread of the cooperative pool. In the heap
/// admission suite, which runs alone, as the footprints it measures need.
extension HeapAdmissionTests {
    @Test func anAsyncAllocationPastTheBudgetSucceedsOnceASuspendedAppsTerminationMakesRoom() async throws {
        let (system, victim, active) = try await suspendedVictimAndActiveApp(admissionWait: .seconds(30))
        let heap = try system.heap(for: active.identifier)

        let buffer = try await system.running {
            // Once the account knows the footprint outside the heaps.
            #expect(await system.monitor.sampled() != nil)
            // 96 MiB held plus 192 MiB asked for pass the budget (256 MiB above the baseline).
            return try await heap.allocateSuspending(byteCount: 192 * mebibyte)
        }

        #expect(buffer.byteCount == 192 * mebibyte)
        #expect(heap.allocatedBytes == 192 * mebibyte)
        #expect(victim.state == .notRunning)
        #expect(await eventually { system.terminations.map(\.app) == [victim.identifier] })
        #expect(system.refusedAllocations.isEmpty)
    }

    @Test func asyncAllocationsWaitingForRoomHoldNoThreadAndACancelledOneIsRefusedAndChangesNothing() async throws {
        // No wait ends by itself during the test.
        let (system, active, heap, held) = try await Self.activeAppHolding64MiB(admissionWait: .seconds(60))
        // More waiting allocations than the cooperative pool has threads: blocked threads would
        // leave none for the probe below.
        let waiting = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) + 2

        let (probeRan, outcomes) = try await system.running { () -> (Bool, [MemoryPressureError?]) in
            // Once the account knows the footprint outside the heaps.
            #expect(await system.monitor.sampled() != nil)
            let allocations = (0..<waiting).map { _ in
                Task { () -> MemoryPressureError? in
                    do throws(MemoryPressureError) {
                        _ = try await heap.allocateSuspending(byteCount: 256 * mebibyte)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            // Every allocation is counted in the heap while it waits.
            let allWaiting = await eventually { heap.allocatedBytes == 64 * mebibyte + waiting * 256 * mebibyte }
            let probe = Task { true }
            let probeRan = await probe.value && allWaiting
            for allocation in allocations { allocation.cancel() }
            var outcomes: [MemoryPressureError?] = []
            for allocation in allocations { outcomes.append(await allocation.value) }
            return (probeRan, outcomes)
        }

        #expect(probeRan)
        #expect(outcomes.count == waiting)
        for error in outcomes {
            #expect(error?.code == .allocationRefused)
            #expect(error?.app == active.identifier)
            #expect(error?.description.contains("its task was cancelled before room was made") == true)
        }
        #expect(heap.allocatedBytes == 64 * mebibyte)
        #expect(system.refusedAllocations == [active.identifier: waiting])
        withExtendedLifetime(held) {}
    }

    @Test func withNoRoomToMakeAnAsyncAllocationIsRefusedAfterTheBoundedWait() async throws {
        let (system, active, heap, held) = try await Self.activeAppHolding64MiB(admissionWait: .milliseconds(300))

        let error = try await system.running { () -> MemoryPressureError? in
            // Once the account knows the footprint outside the heaps.
            #expect(await system.monitor.sampled() != nil)
            return await #expect(throws: MemoryPressureError.self) { _ = try await heap.allocateSuspending(byteCount: 256 * mebibyte) }
        }

        #expect(error?.code == .allocationRefused)
        #expect(error?.description.contains("no room was made within 0.3 seconds") == true)
        #expect(heap.allocatedBytes == 64 * mebibyte)
        #expect(system.refusedAllocations == [active.identifier: 1])
        withExtendedLifetime(held) {}
    }

    @Test func anAsyncAllocationOutsideAnyRunningSystemOrPastTheHardLimitIsJudgedAsASynchronousOne() async throws {
        let system = try Self.system(above: try settledResidentBytes(), admissionWait: .seconds(30))
        let limits = try AppMemoryLimits(foreground: .init(hardBytes: 8 * mebibyte))
        let active = try system.register(.test("limited"), limits: limits) { IdleDelegate() }
        try await active.launch()
        let heap = try system.heap(for: active.identifier)
        // Not running: held only to the hard limit.
        let small = try await heap.allocateSuspending(byteCount: 4 * mebibyte, zeroed: true)
        #expect(small.withUnsafeBytes { $0.allSatisfy { $0 == 0 } })
        let error = await #expect(throws: MemoryPressureError.self) { _ = try await heap.allocateSuspending(byteCount: 8 * mebibyte) }
        #expect(error?.code == .allocationRefused)
        await #expect(throws: MemoryPressureError.self) { _ = try await heap.allocateSuspending(byteCount: 0) }
        #expect(heap.allocatedBytes == 4 * mebibyte)
        withExtendedLifetime(small) {}
    }
}
