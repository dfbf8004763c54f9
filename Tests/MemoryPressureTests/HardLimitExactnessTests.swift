import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// An app's hard limit is exact: the app is terminated for it only when its footprint is over the
/// limit, never for an allocation that was refused at the limit.
@Suite struct HardLimitExactnessTests {
    @Test func allocationsRefusedAtTheLimitWhileTheEnforcerRunsTerminateNothing() async throws {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33, logger: silentLogger)
        // The enforcer judges the app on every sample: as often as the monitor samples.
        configuration.monitor.interval = .milliseconds(1)
        let system = try MemorySystem(configuration: configuration)
        let hardBytes = 8 * mebibyte
        let app = try system.register(.test("at-its-limit"), limits: AppMemoryLimits(foreground: try .init(hardBytes: hardBytes))) {
            IdleDelegate()
        }
        try await app.launch()
        let heap = try system.heap(for: app.identifier)
        // The heap holds exactly its limit.
        let held = try (0..<4).map { _ in try heap.allocate(byteCount: 2 * mebibyte) }
        #expect(heap.allocatedBytes == hardBytes)

        let refused = SharedBox(0)
        let samples = SharedBox(0)
        let counting = system.monitor.events.observe { event in
            if case .sample = event { samples.update { $0 += 1 } }
        }
        try await system.running {
            // 1,000 rounds of refused allocations on one thread, each round at least one sample
            // long, while the enforcer judges the app on the monitor's samples on another.
            await Task.detached {
                for _ in 0..<1_000 {
                    let start = samples.value
                    repeat {
                        for byteCount in [1, 4 * mebibyte, 64 << 10] {
                            if (try? heap.allocate(byteCount: byteCount)) == nil { refused.update { $0 += 1 } }
                        }
                    } while samples.value == start
                }
            }.value
        }
        withExtendedLifetime((held, counting)) {}
        #expect(refused.value >= 3_000)
        #expect(samples.value >= 1_000)
        #expect(app.state == .active)
        #expect(system.terminations.isEmpty, "\(system.terminations)")
        #expect(heap.allocatedBytes == hardBytes)
    }
}
