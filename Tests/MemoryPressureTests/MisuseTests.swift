import MemoryPressure
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import Testing

/// The public API used as users misuse a library: calls repeated, re-entered and given values at
/// the edges of their types. Each gets a typed error or does the right thing; none traps, hangs or
/// corrupts a count.
@Suite struct MisuseTests {
    @Test func anObserverOfLifecycleEventsReadsEveryPropertyOfTheAppItHearsOf() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33))
        let app = try system.register(.test("observed")) { RecordingDelegate() }
        let reasons = SharedLog<String>()
        // The observer the issue's user wrote: it crashed the process on the first event (the
        // event was emitted under the app's lock, which the property takes again).
        let token = system.lifecycleEvents.observe { _ in
            reasons.append(app.terminationReason.map { "\($0)" } ?? "-")
            _ = app.backgroundTimeRemaining
            _ = app.launchOptions
            _ = app.openBackgroundTaskCount
        }
        try await app.launch()
        try await app.terminate(reason: .explicit)
        withExtendedLifetime(token) {}
        #expect(reasons.all.first == "-")
        #expect(reasons.all.last == "explicit")
    }

    @Test func anObserverMovesTheAppItHearsOfWithoutADeadlock() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33))
        let app = try system.register(.test("moved-by-observer"), configuration: .patient()) { RecordingDelegate() }
        // On becoming active, the observer sends the app to the background; the transition's events
        // are delivered after the observer returns, in order.
        let token = system.lifecycleEvents.observe { event in
            if case .stateChanged(_, _, .active) = event {
                Task { try? await app.enterBackground() }
            }
            if case .stateChanged = event {
                _ = try? app.beginBackgroundTask { _ in }
            }
        }
        let states = SharedLog<AppState>()
        let recorder = system.lifecycleEvents.observe { event in
            if case .stateChanged(_, _, let state) = event { states.append(state) }
        }
        try await app.launch()
        #expect(await eventually { states.all.contains(.background) })
        withExtendedLifetime((token, recorder)) {}
        #expect(Array(states.all.prefix(3)) == [.inactive, .active, .inactive])
    }

    @Test func runningTwiceAtOnceIsRefusedAndTheFirstRunGoesOn() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33))
        try await system.running {
            #expect(await eventually { system.monitor.latestSample != nil })
            await #expect(throws: MemoryPressureError.self) {
                try await system.run()
            }
            do {
                try await system.run()
            } catch let error as MemoryPressureError {
                #expect(error.code == .alreadyRunning)
                #expect("\(error)".contains("already running"))
            }
            // The first run still samples.
            let seen = system.monitor.latestSample?.time
            #expect(await eventually { system.monitor.latestSample?.time != seen })
        }
        // Once it has returned, the system runs again.
        let last = system.monitor.latestSample?.time
        try await system.running {
            #expect(await eventually { system.monitor.latestSample?.time != last })
        }
    }

    @Test func heapSizesAtTheEdgesOfIntAreTypedErrors() throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33))
        let heap = try system.heap(for: .test("edges"))
        let held = try heap.allocate(byteCount: 4096)
        for byteCount in [Int.max, Int.max - 4095, Int.max / 2, (1 << 56) + 1] {
            #expect(throws: MemoryPressureError.self) { _ = try heap.allocate(byteCount: byteCount) }
            #expect(throws: MemoryPressureError.self) { _ = try heap.allocateBytes(byteCount: byteCount) }
            do {
                _ = try heap.allocate(byteCount: byteCount)
            } catch {
                #expect(error.code == .invalidArgument)
                #expect("\(error)".contains("expected 1 to \(1 << 56) bytes"))
            }
        }
        for byteCount in [0, -1, Int.min] {
            #expect(throws: MemoryPressureError.self) { _ = try heap.allocate(byteCount: byteCount) }
        }
        // Nothing refused left a trace.
        #expect(heap.allocatedBytes == 4096)
        withExtendedLifetime(held) {}
    }

    @Test func heapSizesAtTheEdgesOfIntUnderAHardLimitAreRefused() async throws {
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33))
        let limits = AppMemoryLimits(foreground: try .init(hardBytes: 8 * mebibyte))
        let app = try system.register(.test("limited-edges"), limits: limits) { IdleDelegate() }
        try await app.launch()
        let heap = try system.heap(for: app.identifier)
        let held = try heap.allocate(byteCount: 4 * mebibyte)
        for byteCount in [Int.max, 1 << 56, 5 * mebibyte] {
            do {
                _ = try heap.allocate(byteCount: byteCount)
                Issue.record("\(byteCount) bytes were allocated")
            } catch {
                #expect([.allocationRefused, .invalidArgument].contains(error.code))
            }
        }
        #expect(heap.allocatedBytes == 4 * mebibyte)
        withExtendedLifetime(held) {}
    }

    @Test func cacheCostsAtTheEdgesOfIntAddUpWithoutATrap() throws {
        let cache = try PurgeableCache<Int, Int>(name: "edges", category: .rebuildableObjects)
        try cache.setValue(1, forKey: 1, cost: .max)
        try cache.setValue(2, forKey: 2, cost: .max)
        try cache.setValue(3, forKey: 3, cost: .max)
        #expect(cache.count == 3)
        #expect(cache.totalCost == .max)
        // Replacing a cost and trimming work on the exact sum.
        try cache.setValue(1, forKey: 1, cost: 0)
        #expect(try cache.trim(toFraction: 0.5).removedCount == 2)
        #expect(cache.totalCost == 0)
        let limited = try PurgeableCache<Int, Int>(name: "limited", category: .rebuildableObjects, costLimit: .max)
        try limited.setValue(1, forKey: 1, cost: .max)
        try limited.setValue(2, forKey: 2, cost: .max)
        #expect(limited.count == 1)
        #expect(limited.value(forKey: 2) == 2)
    }

    @Test func theServicesIdentifierIsReservedForItsCaches() throws {
        #expect(throws: MemoryPressureError.self) { _ = try AppIdentifier("(service)") }
        do {
            _ = try AppIdentifier("(service)")
        } catch {
            #expect(error.code == .invalidIdentifier)
            #expect("\(error)".contains("reserved"))
        }
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33))
        #expect(throws: MemoryPressureError.self) { _ = try system.register(.service) { IdleDelegate() } }
        #expect(system.apps.isEmpty)
        // Its caches are still the service's.
        let cache = try PurgeableCache<Int, Int>(name: "service", category: .rebuildableObjects)
        #expect(cache.owner == .service)
    }
}
