@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Testing

/// What stays behind once apps are gone (issue 26): storage kept for entries that are no longer
/// there is given back, and what a registered app keeps is what the system promises.
@Suite struct StorageShrinkingTests {
    @Test func aDictionaryThatEmptiesOutGivesItsStorageBack() {
        var dictionary: [Int: Int] = [:]
        for key in 0..<10_000 { dictionary[key] = key * 2 }
        let full = dictionary.capacity
        for key in 10..<10_000 {
            dictionary[key] = nil
            dictionary.shrinkIfSparse()
        }
        #expect(dictionary.capacity < full / 100)
        #expect(dictionary == Dictionary(uniqueKeysWithValues: (0..<10).map { ($0, $0 * 2) }))
        for key in 0..<10 {
            dictionary[key] = nil
            dictionary.shrinkIfSparse()
        }
        #expect(dictionary.isEmpty)
    }

    @Test func aDictionaryDoesNotShrinkAndGrowBackAndForth() {
        var dictionary: [Int: Int] = [:]
        for key in 0..<1_000 { dictionary[key] = key }
        for key in 100..<1_000 {
            dictionary[key] = nil
            dictionary.shrinkIfSparse()
        }
        let capacity = dictionary.capacity
        for round in 0..<1_000 {
            dictionary[1_000 + round] = round
            dictionary[1_000 + round] = nil
            dictionary.shrinkIfSparse()
            #expect(dictionary.capacity == capacity)
        }
        #expect(dictionary.count == 100)
    }

    @Test func aTerminatedAppStaysRegisteredWithItsLimits() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 30))
        let limits = AppMemoryLimits(foreground: try .init(softBytes: 2 * mebibyte, hardBytes: 4 * mebibyte))
        let limited = try system.register(.test("limited"), limits: limits) { IdleDelegate() }
        let plain = try system.register(.test("plain")) { IdleDelegate() }
        for app in [limited, plain] { try await app.launch() }
        #expect(system.hosted.withLimitsInUse.map(\.app.identifier) == [limited.identifier])
        await system.shutDown()
        #expect(system.hosted.withLimitsInUse.isEmpty)
        #expect(system.hosted.appsInUse.isEmpty)
        #expect(system.app(limited.identifier) === limited)
        #expect(system.hosted.limits(of: limited.identifier) == limits)
        #expect(system.hosted.limits(of: plain.identifier) == AppMemoryLimits.none)
        #expect(system.hosted.limits(of: .test("never-registered")) == nil)
        #expect(throws: MemoryPressureError.self) { try system.register(.test("plain")) { IdleDelegate() } }
        // Relaunched, the limited app is checked again.
        try await limited.launch()
        #expect(system.hosted.withLimitsInUse.map(\.app.identifier) == [limited.identifier])
        await system.shutDown()
    }
}
