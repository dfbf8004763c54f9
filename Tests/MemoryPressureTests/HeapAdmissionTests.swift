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

/// App-heap allocations admitted against the budget with the real allocator, as cgroup v2 throttles
/// at `memory.high` and refuses at `memory.max`.
@Suite(.serialized, .exclusiveMemoryUse)
struct HeapAdmissionTests {
    let journal = TestAppJournal()

    /// A system whose thresholds sit at fixed distances above `baseline`: warning at +160 MiB,
    /// critical at +200 MiB, budget at +256 MiB, target at +100 MiB.
    static func system(above baseline: Int, admissionWait: Duration, interval: Duration = .milliseconds(20)) throws -> MemorySystem {
        let budgetBytes = baseline + 256 * mebibyte
        func ratio(_ above: Int) -> Double { Double(baseline + above * mebibyte) / Double(budgetBytes) }
        let thresholds = try MemoryBudget.Thresholds(
            warning: ratio(160), critical: ratio(200), warningRecovery: ratio(100), criticalRecovery: ratio(180)
        )
        var configuration = MemorySystem.Configuration(budget: try MemoryBudget(totalBytes: budgetBytes, thresholds: thresholds))
        configuration.monitor.interval = interval
        configuration.monitor.settleTime = .zero
        configuration.monitor.stallThresholds = nil
        configuration.monitor.stallTrigger = nil
        configuration.admissionWait = admissionWait
        return try MemorySystem(configuration: configuration)
    }

    /// A system as ``system(above:admissionWait:interval:)`` above the settled baseline, whose only
    /// app is active and holds 64 MiB in its heap: nothing can make room for more.
    static func activeAppHolding64MiB(admissionWait: Duration) async throws -> (system: MemorySystem, app: App, heap: AppHeap, held: HeapBuffer) {
        let system = try system(above: try settledResidentBytes(), admissionWait: admissionWait)
        let active = try system.register(.test("active")) { IdleDelegate() }
        try await active.launch()
        let heap = try system.heap(for: active.identifier)
        return (system, active, heap, try heap.allocate(byteCount: 64 * mebibyte))
    }

    /// A system as ``system(above:admissionWait:interval:)`` above the settled baseline, with a
    /// suspended app holding 96 MiB (the victim) and an active app.
    func suspendedVictimAndActiveApp(admissionWait: Duration) async throws -> (system: MemorySystem, victim: App, active: App) {
        let system = try Self.system(above: try settledResidentBytes(), admissionWait: admissionWait)
        let victim = try await suspendedApp("victim", mebibytes: 96, in: system)
        let active = try system.register(.test("active")) { IdleDelegate() }
        try await active.launch()
        return (system, victim, active)
    }

    /// A suspended app holding `mebibytes` of resident ballast in its heap.
    func suspendedApp(_ name: String, mebibytes: Int, in system: MemorySystem) async throws -> App {
        let registry = system.registry
        let journal = journal
        let app = try system.register(.test(name), configuration: .patient()) {
            ballastDelegate(mebibytes, registry: registry, journal: journal)
        }
        try await app.launch()
        try await app.enterBackground()
        return app
    }

    @Test func anAllocationPastTheBudgetWaitsAndSucceedsOnceASuspendedAppsTerminationMakesRoom() async throws {
        let (system, victim, active) = try await suspendedVictimAndActiveApp(admissionWait: .seconds(30))
        #expect(victim.state == .suspended)

        let buffer = try await system.running {
            // Waits for the first sample, so the account knows the footprint outside the heaps.
            #expect(await system.monitor.sampled() != nil)
            // 96 MiB held plus 192 MiB asked for pass the budget (256 MiB above the baseline).
            return try system.heap(for: active.identifier).allocate(byteCount: 192 * mebibyte)
        }

        #expect(buffer.byteCount == 192 * mebibyte)
        #expect(system.footprint(of: active.identifier).heapBytes == 192 * mebibyte)
        #expect(victim.state == .notRunning)
        // The room came as the victim's run loop let go of its heap; its record follows at once.
        #expect(await eventually { !system.terminations.isEmpty })
        #expect(system.terminations.map(\.app) == [victim.identifier])
        #expect(system.terminations.first?.reason == .systemPressure)
        #expect(system.refusedAllocations.isEmpty)
    }

    @Test func withNoRoomToMakeTheAllocationIsRefusedAfterTheBoundedWaitAndChangesNothing() async throws {
        let (system, active, heap, held) = try await Self.activeAppHolding64MiB(admissionWait: .milliseconds(300))
        let refusals = Mutex<[AppIdentifier]>([])
        let observation = system.events.observe { event in
            if case .allocationRefused(let app, let bytes) = event, bytes == 256 * mebibyte {
                refusals.withLock { $0.append(app) }
            }
        }
        defer { observation.cancel() }

        let error = try await system.running { () -> MemoryPressureError? in
            // Once the account knows the footprint outside the heaps.
            #expect(await system.monitor.sampled() != nil)
            return #expect(throws: MemoryPressureError.self) { _ = try heap.allocate(byteCount: 256 * mebibyte) }
        }

        #expect(error?.code == .allocationRefused)
        #expect(error?.app == active.identifier)
        #expect(error?.description.contains("a heap allocation of \(256 * mebibyte) bytes is refused") == true)
        #expect(error?.description.contains("the budget of \(system.configuration.budget.totalBytes) bytes") == true)
        #expect(heap.allocatedBytes == 64 * mebibyte)
        #expect(system.refusedAllocations == [active.identifier: 1])
        #expect(refusals.withLock { $0 } == [active.identifier])
        // The active app is never terminated for system pressure, even when nothing else can go.
        #expect(active.state == .active)
        withExtendedLifetime(held) {}
    }

    @Test func anAllocationThatCrossesCriticalWakesTheMonitorBeforeItsNextTick() async throws {
        let baseline = try settledResidentBytes()
        // A tick far longer than the test waits: only the allocation can raise the level in time.
        let system = try Self.system(above: baseline, admissionWait: .seconds(30), interval: .seconds(600))
        let active = try system.register(.test("active")) { IdleDelegate() }
        try await active.launch()
        let heap = try system.heap(for: active.identifier)
        let events = system.monitor.events.stream()

        let change = try await system.running { () -> PressureChange? in
            _ = await events.first(within: .seconds(30)) { $0.sample != nil }
            let buffer = try heap.allocate(byteCount: 224 * mebibyte)
            defer { withExtendedLifetime(buffer) {} }
            return await events.first(within: .seconds(30)) { $0.change?.level == .critical }?.change
        }

        #expect(change?.kind == .rise)
        #expect(try #require(change?.sample.heapBytes) >= 224 * mebibyte)
    }

    @Test func heapsOutsideAnyRunningSystemAreHeldOnlyToTheirHardLimits() throws {
        let baseline = try settledResidentBytes()
        let system = try Self.system(above: baseline, admissionWait: .seconds(30))
        // Not running: no sample knows the footprint and no ladder could make room.
        let heap = try system.heap(for: .test("idle"))
        let buffer = try heap.allocate(byteCount: 320 * mebibyte)
        #expect(heap.allocatedBytes == 320 * mebibyte)
        #expect(system.refusedAllocations.isEmpty)
        withExtendedLifetime(buffer) {}
    }
}
