import BenchmarkSupport
import MemoryPressure
import MemoryPressureTestKit

/// What `count` terminated apps leave behind, measured through the public API only, as a service
/// uses the library (issue 26): each app, made with `register` and `launch`, takes its heap with
/// `heap(for:)` at launch and holds one 1 MiB `HeapBuffer` from `allocate(byteCount:)` in it; then
/// every app is terminated (`shutDown`), their delegates and so their buffers are let go by the
/// termination, and the records it returns are dropped. The system stays alive, as a service's does.
///
/// Resident bytes are the process's (`/proc/self/statm`) after jemalloc's dirty pages were returned
/// (`settledResidentBytes`), as for `Scale-tenants:N`.
///
/// What the apps leave includes what the allocator keeps for the address space their buffers
/// spanned, which a process pays once, at its highest (jemalloc's address map, about 2 KiB per
/// 1 MiB; see BENCHMARKS.md, "Scale"), and what any process pays once (the run-loop pool's threads,
/// the arena pool, the runtime's metadata). A second run in the same process reuses both and reads
/// about 3 KiB per app less at 10,000 apps. So the figure is taken once per process, in a process
/// that has run nothing else, as a service would see it; its percentiles come from several runs of
/// the executable.
struct LeftBehindFigures {
    var residentLeftPerApp = 0
    var terminated = 0

    /// Each app's buffer.
    static let bufferBytes = 1 << 20

    static func measure(_ count: Int) async throws -> LeftBehindFigures {
        let before = try settledResidentBytes()
        // Not run: the budget (11.4 GiB) is not held, and 10,000 buffers of 1 MiB are all admitted.
        let system = try MemorySystem(configuration: .benchmark(targetBytes: 8 << 30))
        let failure = SharedBox<String?>(nil)
        for index in 0..<count {
            // Unowned: the system holds the app, which holds this closure.
            let heap: @Sendable (AppIdentifier) throws -> AppHeap = { [unowned system] app in try system.heap(for: app) }
            let app = try system.register(try Tenants.identifier(index)) { [heap] in
                TenantDelegate(heap: heap, bytes: bufferBytes, onFailure: { failure.value = $0 })
            }
            try await app.launch()
        }
        if let failure = failure.value { throw BenchmarkFailure(failure) }

        var figures = LeftBehindFigures()
        do {
            let records = await system.shutDown()
            figures.terminated = records.count
            // Each record's returned bytes are what was gone from the app's heap once its run loop had
            // let go of its delegate: the whole buffer.
            guard records.count == count, records.allSatisfy({ $0.footprintBytes >= bufferBytes && $0.returnedBytes == $0.footprintBytes }) else {
                throw BenchmarkFailure("the shutdown terminated \(records.count) apps of \(count), or left buffers alive")
            }
        }
        figures.residentLeftPerApp = try residentGrowth(since: before) / count
        withExtendedLifetime(system) {}
        return figures
    }
}
