import Dispatch
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
        let samplesDuring = try await system.running {
            #expect(await eventually { samples.value > 0 })
            let before = samples.value
            // 1,000 rounds of 30 refused allocations on a thread of Dispatch's (not the cooperative
            // pool's, which it would hold for seconds under a sanitizer), while the enforcer judges
            // the app on every sample on the monitor's thread.
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    for _ in 0..<1_000 {
                        for _ in 0..<10 {
                            for byteCount in [1, 4 * mebibyte, 64 << 10] {
                                if (try? heap.allocate(byteCount: byteCount)) == nil { refused.update { $0 += 1 } }
                            }
                        }
                    }
                    done.resume()
                }
            }
            return samples.value - before
        }
        withExtendedLifetime((held, counting)) {}
        #expect(refused.value == 30_000)
        // The enforcer ran while the allocations were refused.
        #expect(samplesDuring >= 5, "\(samplesDuring) samples during the refusals")
        #expect(app.state == .active)
        #expect(system.terminations.isEmpty, "\(system.terminations)")
        #expect(heap.allocatedBytes == hardBytes)
    }
}
