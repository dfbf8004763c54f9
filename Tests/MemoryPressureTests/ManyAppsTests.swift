@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// Thousands of apps: the index of apps by state, the ladder's choice of victims among them.
@Suite struct ManyAppsTests {
    /// Registers `count` apps named `prefix-0`… with a recording delegate and no heap, and limits no
    /// deadline reaches: under ThreadSanitizer on a loaded machine, `quick`'s 100 ms ended one of
    /// 1,000 apps entering the background before the test terminated it.
    func registerPlainApps(_ count: Int, prefix: String, in system: MemorySystem, limits: AppMemoryLimits = .none) throws -> [App] {
        try (0..<count).map { index in
            try system.register(.test("\(prefix)-\(index)"), configuration: .patient(), limits: limits) { RecordingDelegate() }
        }
    }

    @Test func theStateIndexHoldsEachAppInItsStateAndNoTerminatedOne() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33))
        let limits = try AppMemoryLimits(foreground: .init(hardBytes: 1 << 30), background: .init(hardBytes: 1 << 30))
        let apps = try registerPlainApps(2_000, prefix: "tenant", in: system, limits: limits)
        for app in apps { try await app.launch() }
        for app in apps[..<1_000] { try await app.enterBackground() }
        for app in apps[..<500] { try await app.terminate(reason: .explicit) }

        let hosted = system.hosted
        #expect(Set(hosted.apps(in: [.suspended]).map(\.identifier)) == Set(apps[500..<1_000].map(\.identifier)))
        #expect(Set(hosted.apps(in: [.active]).map(\.identifier)) == Set(apps[1_000...].map(\.identifier)))
        #expect(hosted.apps(in: [.notRunning, .background, .inactive]).isEmpty)
        #expect(Set(hosted.appsInUse.map(\.identifier)) == Set(apps[500...].map(\.identifier)))
        #expect(Set(hosted.withLimitsInUse.map(\.app.identifier)) == Set(apps[500...].map(\.identifier)))
        #expect(hosted.apps.count == 2_000)

        // A terminated app relaunched is back in the index.
        try await apps[0].launch()
        #expect(hosted.apps(in: [.active]).contains { $0 === apps[0] })
        await system.shutDown()
        #expect(hosted.appsInUse.isEmpty && hosted.withLimitsInUse.isEmpty)
    }

    @Test func theVictimHeapGivesTheLargestFirstAndTiesToTheFirstIdentifier() throws {
        // 5,000 apps whose footprints repeat every 1,000, in a scrambled order.
        let apps = (0..<5_000).map { index in
            App(identifier: .test("app-\(index)"), threads: testThreads, makeDelegate: { RecordingDelegate() })
        }
        var bytes: [AppIdentifier: Int] = [:]
        for (index, app) in apps.enumerated() { bytes[app.identifier] = (index * 7_919) % 1_000 }
        var heap = VictimHeap(apps.shuffled()) { bytes[$0.identifier, default: -1] }
        var taken: [AppIdentifier] = []
        while let app = heap.popLargest() { taken.append(app.identifier) }

        let expected = bytes.sorted { lhs, rhs in lhs.value != rhs.value ? lhs.value > rhs.value : lhs.key < rhs.key }
        #expect(taken == expected.map(\.key))
        #expect(heap.popLargest() == nil)
    }
}

/// The ladder among thousands of apps, against the real allocator and the process's footprint.
@Suite(.serialized, .exclusiveMemoryUse)
struct ManyAppsLadderTests {
    let journal = TestAppJournal()

    /// The footprint is the process's resident bytes, which a sanitizer's own allocator and
    /// bookkeeping make meaningless (as for ReclamationLadderTests' premise of jemalloc).
    @Test(.disabled(if: Sanitizers.areActive, "a sanitizer's allocator serves malloc instead of jemalloc"))
    func amongTwoThousandSuspendedAppsTheLadderTerminatesTheLargestFirstAndNoOtherApp() async throws {
        // 700 MiB over the baseline in three suspended apps beside 2,000 small ones (a few MiB in
        // all): a target 200 MiB over the baseline needs the 400 and 200 MiB apps gone, not the
        // 100 MiB one nor any small app.
        let baseline = try settledResidentBytes()
        let system = try MemorySystem(configuration: .test(targetBytes: baseline + 200 * mebibyte))
        let small = try (0..<2_000).map { index in
            try system.register(.test("small-\(index)"), configuration: .patient()) { RecordingDelegate() }
        }
        let registry = system.registry
        let journal = journal
        let large = try [100, 400, 200].map { mebibytes in
            try system.register(.test("large-\(mebibytes)"), configuration: .patient()) {
                ballastDelegate(mebibytes, registry: registry, journal: journal)
            }
        }
        for app in small + large {
            try await app.launch()
            try await app.enterBackground()
        }
        #expect((small + large).allSatisfy { $0.state == .suspended })

        let events = system.events.stream()
        let run = try await system.running {
            await events.first(within: .seconds(30)) { $0.runUnderTarget != nil }?.runUnderTarget
        }

        #expect(run != nil)
        #expect(system.terminations.map(\.app) == [.test("large-400"), .test("large-200")])
        #expect(large[0].state == .suspended)
        #expect(small.allSatisfy { $0.state == .suspended })
        // The terminated apps are no longer candidates: they left the index.
        let candidates = Set(system.hosted.apps(in: [.suspended]).map(\.identifier))
        #expect(candidates == Set((small + [large[0]]).map(\.identifier)))
    }
}
