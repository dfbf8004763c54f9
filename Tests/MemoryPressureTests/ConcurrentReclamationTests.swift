import Dispatch
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

/// The whole system under terminations (each destroys an app's arena) while every arena is purged
/// on other threads: before arena commands had one owner, this killed the process inside jemalloc.
@Suite(.exclusiveMemoryUse)
struct ConcurrentReclamationTests {
    static let rounds = Sanitizers.areActive ? 40 : 400

    @Test func terminationsAndPurgesAtOnceNeverCrash() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 64 * mebibyte))
        let journal = TestAppJournal()
        let stop = Atomic<Bool>(false)
        let purges = Atomic<Int>(0)
        let purgers = DispatchGroup()
        DispatchQueue.global().async(group: purgers) {
            while !stop.load(ordering: .relaxed) {
                try? Jemalloc.purgeAllArenas()
                purges.add(1, ordering: .relaxed)
            }
        }
        let registry = system.registry
        let apps = try (0..<4).map { index in
            try system.register(.test("tenant-\(index)")) {
                ballastDelegate(1, registry: registry, journal: journal)
            }
        }
        for round in 0..<Self.rounds {
            await withTaskGroup(of: Void.self) { group in
                for app in apps {
                    group.addTask {
                        _ = try? await app.launch()
                        if round.isMultiple(of: 2) { _ = try? await app.enterBackground() }
                        _ = system.registry.purge(.critical, apps: [app.identifier])
                        _ = try? await app.terminate(reason: .explicit)
                    }
                }
            }
        }
        stop.store(true, ordering: .relaxed)
        purgers.wait()
        #expect(purges.load(ordering: .relaxed) > 0)
        #expect(system.terminations.count == Self.rounds * apps.count)
        #expect(system.terminations.allSatisfy { $0.returnedBytes >= mebibyte })
        #expect(apps.allSatisfy { system.footprint(of: $0.identifier).heapBytes == 0 })
    }
}
