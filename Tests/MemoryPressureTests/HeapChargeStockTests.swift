#if canImport(Glibc)
import Glibc
#endif
import Jemalloc
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import Testing

/// Small heap allocations charged to the budget's account from each thread's stock, against the
/// real allocator: the heap's bytes stay exact, the account's footprint is above them by at most
/// the stocks, near the budget each allocation is judged alone, and a thread's stock goes back
/// when it exits.
@Suite(.serialized, .exclusiveMemoryUse)
struct HeapChargeStockTests {
    static func account(budgetBytes: Int, holdingBudget: Bool, admissionWait: Duration = .milliseconds(20)) throws -> FootprintAccount {
        let account = FootprintAccount(
            budget: try MemoryBudget(totalBytes: budgetBytes), admissionWait: admissionWait, timers: DeadlineTimers(), logger: silentLogger
        ) { _, _ in }
        account.holdBudget(holdingBudget)
        return account
    }

    /// Runs `body` on a thread of its own, which exits before this returns.
    static func onThreadOfItsOwn(_ body: @escaping @Sendable () -> Void) {
        final class Work { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, Unmanaged.passRetained(Work(body)).toOpaque())
        precondition(status == 0, "pthread_create failed: errno \(status)")
        pthread_join(thread, nil)
    }

    @Test func smallAllocationsAreChargedABatchAtATimeAndTheHeapStaysExact() throws {
        let account = try Self.account(budgetBytes: 1 << 30, holdingBudget: true)
        let heap = try AppHeap(app: .test("stocked"), account: account)
        // What the thread saw: the footprint after its first allocation and after 100 more, and
        // the heap's bytes and the footprint once it freed the first.
        let seen = Mutex<(first: Int, more: Int, heap: Int, footprint: Int, addresses: [Int])>((0, 0, 0, 0, []))
        Self.onThreadOfItsOwn {
            let first = try! heap.allocateBytes(byteCount: 256)
            let chargedAtFirst = account.footprintBytes
            let more = (0..<100).map { _ in try! heap.allocateBytes(byteCount: 256) }
            let chargedAfterMore = account.footprintBytes
            heap.deallocate(first)
            seen.withLock {
                $0 = (chargedAtFirst, chargedAfterMore, heap.allocatedBytes, account.footprintBytes, more.map { Int(bitPattern: $0.baseAddress) })
            }
        }
        let (chargedAtFirst, chargedAfterMore, heapBytes, footprint, addresses) = seen.withLock { $0 }
        // One batch charged with the first allocation, and nothing more for the next ones.
        #expect(chargedAtFirst == 256 + FootprintAccount.stockBatch)
        #expect(chargedAfterMore == chargedAtFirst)
        #expect(heapBytes == 100 * 256)
        #expect(footprint == chargedAtFirst)
        // The thread's stock went back when it exited: the account holds exactly the heap's bytes.
        #expect(account.footprintBytes == 100 * 256)
        #expect(heap.allocatedBytes == 100 * 256)
        for address in addresses {
            heap.deallocate(UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(bitPattern: address), count: 256))
        }
        #expect(heap.allocatedBytes == 0)
        // This thread holds no stock for the account: its frees went straight back.
        #expect(account.footprintBytes == 0)
    }

    @Test func nearTheBudgetEachSmallAllocationIsJudgedAloneAndTheFirstPastItIsRefused() throws {
        let budgetBytes = 1 << 20
        let account = try Self.account(budgetBytes: budgetBytes, holdingBudget: true)
        let heap = try AppHeap(app: .test("at-the-budget"), account: account)
        let outcome = Mutex<(allocated: Int, error: MemoryPressureError?, footprint: Int)>((0, nil, 0))
        Self.onThreadOfItsOwn {
            var held: [UnsafeMutableRawBufferPointer] = []
            do throws(MemoryPressureError) {
                while true { held.append(try heap.allocateBytes(byteCount: 256)) }
            } catch {
                outcome.withLock { $0 = (heap.allocatedBytes, error, account.footprintBytes) }
            }
            for bytes in held { heap.deallocate(bytes) }
        }
        let (allocated, error, footprint) = outcome.withLock { $0 }
        // Every allocation that fit was admitted, and the first that did not was refused.
        #expect(allocated == budgetBytes / 256 * 256)
        #expect(error?.code == .allocationRefused)
        // The refusal changed nothing, and the refused thread held no stock.
        #expect(footprint == allocated)
        #expect(account.refusedAllocations == [.test("at-the-budget"): 1])
        #expect(heap.allocatedBytes == 0)
        #expect(account.footprintBytes == 0)
    }

    @Test func aThreadMovingToAnotherAccountGivesItsStockBack() throws {
        let first = try Self.account(budgetBytes: 1 << 30, holdingBudget: false)
        let second = try Self.account(budgetBytes: 1 << 30, holdingBudget: false)
        let firstHeap = try AppHeap(app: .test("first"), account: first)
        let secondHeap = try AppHeap(app: .test("second"), account: second)
        let seen = Mutex<[Int]>([])
        Self.onThreadOfItsOwn {
            let a = try! firstHeap.allocateBytes(byteCount: 64)
            let firstWithStock = first.footprintBytes
            let b = try! secondHeap.allocateBytes(byteCount: 64)
            let firstAfterMove = first.footprintBytes
            let secondWithStock = second.footprintBytes
            firstHeap.deallocate(a)
            let firstAfterFree = first.footprintBytes
            secondHeap.deallocate(b)
            seen.withLock { $0 = [firstWithStock, firstAfterMove, secondWithStock, firstAfterFree] }
        }
        #expect(seen.withLock { $0 } == [64 + FootprintAccount.stockBatch, 64, 64 + FootprintAccount.stockBatch, 0])
        #expect(second.footprintBytes == 0)
    }
}
