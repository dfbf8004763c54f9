import MemoryPressure
import MemoryPressureTestKit
import Synchronization
import Testing

/// The public API misused as users misuse it, beyond `MisuseTests`: transitions from every state and
/// from many tasks at once, background tasks ended twice or on the wrong app, values at the edges of
/// their types, caches and observers that re-enter what is calling them. Each ends in a typed error
/// (a code, and a message naming the problem) or in the documented behaviour; none traps, hangs or
/// leaves a state that disagrees with itself.
@Suite struct PublicAPIMisuseTests {
    static func system() throws -> MemorySystem {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
        configuration.logger = silentLogger
        return try MemorySystem(configuration: configuration)
    }

    /// The code of the `MemoryPressureError` that `body` throws, or nil when it throws none.
    static func code(_ body: () throws -> Void) -> MemoryPressureError.Code? {
        do {
            try body()
            return nil
        } catch let error as MemoryPressureError {
            return error.code
        } catch {
            Issue.record("not a MemoryPressureError: \(error)")
            return nil
        }
    }

    /// The error `body` throws, or nil.
    static func error(_ body: () async throws -> Void) async -> MemoryPressureError? {
        do {
            try await body()
            return nil
        } catch let error as MemoryPressureError {
            return error
        } catch {
            Issue.record("not a MemoryPressureError: \(error)")
            return nil
        }
    }

    // MARK: Transitions from every state

    enum Transition: String, CaseIterable, Sendable {
        case launch, deactivate, activate, enterBackground, enterForeground, suspend, terminate

        /// The states the guide's table accepts it from.
        var accepted: Set<AppState> {
            switch self {
            case .launch: [.notRunning]
            case .deactivate: [.active]
            case .activate: [.inactive]
            case .enterBackground: [.active, .inactive]
            case .enterForeground: [.background, .suspended]
            case .suspend: [.background]
            case .terminate: [.inactive, .active, .background, .suspended]
            }
        }

        func run(on app: App) async throws -> AppState {
            switch self {
            case .launch: try await app.launch()
            case .deactivate: try await app.deactivate()
            case .activate: try await app.activate()
            case .enterBackground: try await app.enterBackground()
            case .enterForeground: try await app.enterForeground()
            case .suspend: try await app.suspend()
            case .terminate: try await app.terminate(reason: .explicit)
            }
        }
    }

    /// Brings a freshly registered app to `state`; a background app holds a background task.
    static func bring(_ app: App, to state: AppState) async throws {
        switch state {
        case .notRunning:
            return
        case .active:
            try await app.launch()
        case .inactive:
            try await app.launch()
            try await app.deactivate()
        case .background:
            try await app.launch()
            _ = try app.beginBackgroundTask { _ in }
            try await app.enterBackground()
        case .suspended:
            try await app.launch()
            try await app.enterBackground()
        }
        #expect(app.state == state)
    }

    @Test(arguments: Transition.allCases)
    func everyTransitionFromEveryStateIsMadeOrRefusedWithItsCode(transition: Transition) async throws {
        let system = try Self.system()
        let configuration = try AppConfiguration(backgroundTaskTimeLimit: .seconds(600))
        for state in [AppState.notRunning, .inactive, .active, .background, .suspended] {
            let app = try system.register(.test("\(transition)-from-\(state)"), configuration: configuration) { IdleDelegate() }
            try await Self.bring(app, to: state)
            let error = await Self.error { _ = try await transition.run(on: app) }
            // A background app with a task open cannot suspend: the same code, a message that says why.
            if transition.accepted.contains(state), !(transition == .suspend && state == .background) {
                #expect(error == nil, "\(transition) from \(state): \(String(describing: error))")
            } else {
                #expect(error?.code == .invalidTransition, "\(transition) from \(state)")
                #expect(error?.app == app.identifier)
                #expect(app.state == state, "a refused \(transition) changes nothing")
            }
            if app.state != .notRunning { try await app.terminate(reason: .explicit) }
        }
    }

    @Test func fiftyTasksMovingOneAppAtOnceLeaveItConsistent() async throws {
        let system = try Self.system()
        let app = try system.register(.test("flooded"), configuration: .patient()) { IdleDelegate() }
        let unexpected = SharedLog<String>()
        let finished = await withDeadline(.seconds(120)) {
            await withTaskGroup(of: Void.self) { group in
                for task in 0..<50 {
                    group.addTask {
                        for round in 0..<20 {
                            let transition = Transition.allCases[(task + round) % Transition.allCases.count]
                            do {
                                _ = try await transition.run(on: app)
                            } catch let error as MemoryPressureError {
                                if error.code != .invalidTransition { unexpected.append("\(transition): \(error)") }
                            } catch {
                                unexpected.append("\(transition): \(error)")
                            }
                            if round % 3 == 0 {
                                do {
                                    let background = try app.beginBackgroundTask { _ in }
                                    try app.endBackgroundTask(background)
                                } catch let error as MemoryPressureError {
                                    // Refused, or ended meanwhile by a termination from another task.
                                    if ![.invalidTransition, .unknownBackgroundTask].contains(error.code) {
                                        unexpected.append("background task: \(error)")
                                    }
                                } catch {
                                    unexpected.append("background task: \(error)")
                                }
                            }
                        }
                    }
                }
            }
            return true
        }
        #expect(finished == true, "no transition hangs")
        #expect(unexpected.all.isEmpty)
        // Whatever the interleaving, the app settles where the table says and moves on as usual.
        #expect(await eventually { app.state != .background || app.openBackgroundTaskCount > 0 })
        #expect(app.openBackgroundTaskCount == 0)
        if app.state != .notRunning { #expect(try await app.terminate(reason: .explicit) == .notRunning) }
        #expect(app.state == .notRunning)
        #expect(try await app.launch() == .active)
        #expect(try await app.enterBackground() == .suspended)
        #expect(try await app.terminate(reason: .explicit) == .notRunning)
    }

    // MARK: Background tasks

    @Test func aBackgroundTaskEndedTwiceIsUnknownTheSecondTime() async throws {
        let system = try Self.system()
        let app = try system.register(.test("twice-ended")) { IdleDelegate() }
        try await app.launch()
        let task = try app.beginBackgroundTask { _ in }
        try app.endBackgroundTask(task)
        #expect(Self.code { try app.endBackgroundTask(task) } == .unknownBackgroundTask)
        #expect(app.openBackgroundTaskCount == 0)
        // Nor does a task of an earlier launch end one of this launch.
        let old = try app.beginBackgroundTask { _ in }
        try await app.terminate(reason: .explicit)
        #expect(Self.code { try app.endBackgroundTask(old) } == .unknownBackgroundTask)
        try await app.launch()
        let current = try app.beginBackgroundTask { _ in }
        #expect(Self.code { try app.endBackgroundTask(old) } == .unknownBackgroundTask)
        #expect(app.openBackgroundTaskCount == 1)
        try app.endBackgroundTask(current)
    }

    @Test func aBackgroundTaskOfAnotherAppDoesNotEndThisAppsTask() async throws {
        let system = try Self.system()
        let first = try system.register(.test("first")) { IdleDelegate() }
        let second = try system.register(.test("second")) { IdleDelegate() }
        try await first.launch()
        try await second.launch()
        let firstTask = try first.beginBackgroundTask { _ in }
        let secondTask = try second.beginBackgroundTask { _ in }
        // Each app numbers its tasks; a task is still its own app's only.
        let error = #expect(throws: MemoryPressureError.self) { try second.endBackgroundTask(firstTask) }
        #expect(error?.code == .unknownBackgroundTask)
        #expect(error?.app == second.identifier)
        #expect(second.openBackgroundTaskCount == 1, "the second app's task is still open")
        #expect(firstTask != secondTask)
        // In the background, the second app is kept running by its own task alone.
        #expect(try await second.enterBackground() == .background)
        try second.endBackgroundTask(secondTask)
        #expect(await eventually { second.state == .suspended })
        try first.endBackgroundTask(firstTask)
        #expect(first.openBackgroundTaskCount == 0)
    }

    @Test func anExpirationHandlerEndsItsTaskAndEndingItAgainIsUnknown() async throws {
        let system = try Self.system()
        let app = try system.register(.test("expiring"), configuration: .quickWithTimeForExpirationHandlers) { IdleDelegate() }
        try await app.launch()
        let task = SharedBox<BackgroundTaskIdentifier?>(nil)
        let secondEnd = SharedBox<MemoryPressureError.Code?>(nil)
        task.value = try app.beginBackgroundTask { app in
            guard let open = task.value else { return }
            do { try app.endBackgroundTask(open) } catch { Issue.record("the first end: \(error)") }
            do { try app.endBackgroundTask(open) } catch let error as MemoryPressureError { secondEnd.value = error.code } catch {}
        }
        #expect(try await app.enterBackground() == .background)
        #expect(await eventually { app.state == .suspended }, "ended in its handler, the app suspends")
        #expect(secondEnd.value == .unknownBackgroundTask)
        #expect(app.terminationReason == nil, "not terminated for an expired task")
    }

    @Test func aSuspendedOrTerminatedAppCannotBeginABackgroundTask() async throws {
        let system = try Self.system()
        let app = try system.register(.test("no-more-time")) { IdleDelegate() }
        #expect(Self.code { _ = try app.beginBackgroundTask { _ in } } == .invalidTransition)
        try await app.launch()
        #expect(try await app.enterBackground() == .suspended)
        #expect(Self.code { _ = try app.beginBackgroundTask { _ in } } == .invalidTransition)
        #expect(app.state == .suspended)
        try await app.terminate(reason: .explicit)
        #expect(Self.code { _ = try app.beginBackgroundTask { _ in } } == .invalidTransition)
        #expect(app.openBackgroundTaskCount == 0)
    }

    // MARK: Values at the edges

    @Test func appTimeLimitsOutsideTheirRangeAreTypedErrors() {
        for value: Duration in [.zero, .nanoseconds(-1), .seconds(-5), .microseconds(999), .seconds(3601), .seconds(Int64.max)] {
            for make in [
                { try AppConfiguration(launchDeadline: value) },
                { try AppConfiguration(backgroundDeadline: value) },
                { try AppConfiguration(terminationDeadline: value) },
                { try AppConfiguration(backgroundTaskTimeLimit: value) },
            ] as [() throws -> AppConfiguration] {
                do {
                    _ = try make()
                    Issue.record("\(value) was accepted")
                } catch let error as MemoryPressureError {
                    #expect(error.code == .invalidConfiguration)
                    #expect(error.description.contains("expected 1.0 ms to 3600.0 s") || error.description.contains("expected"))
                } catch {
                    Issue.record("\(error)")
                }
            }
        }
        // The ends of the range hold.
        #expect(throws: Never.self) {
            _ = try AppConfiguration(
                launchDeadline: AppConfiguration.acceptedRange.lowerBound, backgroundDeadline: AppConfiguration.acceptedRange.upperBound
            )
        }
    }

    @Test func perAppLimitsAtTheEdgesOfIntAreTypedErrorsOrHold() async throws {
        for (soft, hard) in [(0, nil), (-1, nil), (Int.min, nil), (nil, 0), (nil, Int.min), (Int.max, Int.max), (5, 5), (6, 5)] as [(Int?, Int?)] {
            let code = Self.code { _ = try AppMemoryLimits.Limit(softBytes: soft, hardBytes: hard) }
            #expect(code == .invalidConfiguration, "soft \(String(describing: soft)), hard \(String(describing: hard))")
        }
        // A hard limit of Int.max is no limit in practice: allocations go on, nothing traps.
        let system = try Self.system()
        let limits = AppMemoryLimits(foreground: try .init(softBytes: .max - 1, hardBytes: .max))
        let app = try system.register(.test("max-limits"), limits: limits) { IdleDelegate() }
        try await app.launch()
        let heap = try system.heap(for: app.identifier)
        let buffer = try heap.allocate(byteCount: 1 << 20)
        #expect(heap.allocatedBytes == 1 << 20)
        withExtendedLifetime(buffer) {}
        try await app.terminate(reason: .explicit)
    }

    @Test func budgetsAndThresholdsAtTheEdgesAreTypedErrors() {
        for bytes in [0, -1, Int.min, Int.max] {
            #expect(Self.code { _ = try MemoryBudget(totalBytes: bytes) } == .invalidBudget, "\(bytes) bytes")
        }
        for ratio in [0, -0.5, 1.000001, .nan, .infinity, -.infinity, .leastNonzeroMagnitude] {
            #expect(Self.code { _ = try MemoryBudget.resolve(.physicalMemory(ratio: ratio)) } == .invalidBudget, "ratio \(ratio)")
        }
        for (warning, critical, warningRecovery, criticalRecovery) in [
            (Double.nan, 0.9, 0.7, 0.8), (0.8, .nan, 0.7, 0.8), (0.8, 0.9, .nan, 0.8), (0.8, 0.9, 0.7, .nan),
            (0.8, .infinity, 0.7, 0.8), (0.8, 0.9, -.infinity, 0.8), (0, 0, 0, 0), (-0.8, -0.5, -0.9, -0.6),
        ] {
            #expect(
                Self.code {
                    _ = try MemoryBudget.Thresholds(
                        warning: warning, critical: critical, warningRecovery: warningRecovery, criticalRecovery: criticalRecovery
                    )
                } == .invalidBudget
            )
        }
        for percent in [0, -1, 100.5, .nan, .infinity] {
            #expect(
                Self.code { _ = try StallThresholds(someAverage10ForWarning: percent, fullAverage10ForCritical: 10) } == .invalidConfiguration,
                "\(percent)"
            )
        }
        for (stall, window) in [
            (Duration.zero, Duration.seconds(2)), (.milliseconds(-1), .seconds(2)), (.seconds(3), .seconds(2)),
            (.milliseconds(100), .zero), (.milliseconds(100), .seconds(Int64.max)), (.seconds(Int64.max), .seconds(Int64.max)),
        ] {
            #expect(Self.code { _ = try StallTrigger(stall: stall, window: window) } == .invalidConfiguration, "\(stall) per \(window)")
        }
        for duration: Duration in [.zero, .nanoseconds(-1), .seconds(Int64.min)] {
            #expect(Self.code { _ = try Unrecoverable(after: duration, action: .report) } == .invalidConfiguration, "\(duration)")
        }
    }

    @Test func identifiersAtTheEdgesAreTypedErrorsOrSafeNames() throws {
        for text in ["", ".", "..", "a/b", "a\\b", "\u{0}", "tab\there", "new\nline", "\u{7F}", "(service)", String(repeating: "a", count: 256),
                     String(repeating: "é", count: 128)] {
            let error = #expect(throws: MemoryPressureError.self) { _ = try AppIdentifier(text) }
            #expect(error?.code == .invalidIdentifier, "\(text.debugDescription)")
        }
        let system = try Self.system()
        for text in [" ", "  leading", "trailing ", String(repeating: "a", count: 255), "(service) ", "\u{FEFF}", "🧪", "é"] {
            let identifier = try AppIdentifier(text)
            #expect(identifier.rawValue == text)
            _ = try system.register(identifier) { IdleDelegate() }
        }
        // Canonically equivalent spellings are one identifier (String's equality): a duplicate.
        let composed = try AppIdentifier("caf\u{E9}")
        let decomposed = try AppIdentifier("cafe\u{301}")
        _ = try system.register(composed) { IdleDelegate() }
        let duplicate = #expect(throws: MemoryPressureError.self) { _ = try system.register(decomposed) { IdleDelegate() } }
        #expect(duplicate?.code == .duplicateApp)
    }

    // MARK: Caches

    @Test func cacheLimitsAndFractionsAtTheEdgesAreTypedErrors() throws {
        for make in [
            { try PurgeableCache<Int, Int>(name: "c", category: .rebuildableObjects, costLimit: 0) },
            { try PurgeableCache<Int, Int>(name: "c", category: .rebuildableObjects, costLimit: .min) },
            { try PurgeableCache<Int, Int>(name: "c", category: .rebuildableObjects, countLimit: 0) },
            { try PurgeableCache<Int, Int>(name: "c", category: .rebuildableObjects, countLimit: -1) },
            { try PurgeableCache<Int, Int>(name: "c", category: .rebuildableObjects, countLimit: .max) },
            { try PurgeableCache<Int, Int>(name: "c", category: .rebuildableObjects, countLimit: PurgeableCache<Int, Int>.maximumCount + 1) },
            { try PurgeableCache<Int, Int>(name: "c", category: .rebuildableObjects, budgetFraction: 0) },
            { try PurgeableCache<Int, Int>(name: "c", category: .rebuildableObjects, budgetFraction: -0.5) },
            { try PurgeableCache<Int, Int>(name: "c", category: .rebuildableObjects, budgetFraction: .nan) },
            { try PurgeableCache<Int, Int>(name: "c", category: .rebuildableObjects, budgetFraction: .infinity) },
            { try PurgeableCache<Int, Int>(name: "c", category: .rebuildableObjects, budgetFraction: 1.0000001) },
        ] as [() throws -> PurgeableCache<Int, Int>] {
            #expect(Self.code { _ = try make() } == .invalidConfiguration)
        }
        let cache = try PurgeableCache<Int, Int>(
            name: "edges", category: .rebuildableObjects, costLimit: .max, budgetFraction: .leastNonzeroMagnitude,
            countLimit: PurgeableCache<Int, Int>.maximumCount
        )
        for fraction in [-0.1, 1.1, .nan, .infinity, -.infinity, .signalingNaN] {
            #expect(Self.code { _ = try cache.trim(toFraction: fraction) } == .invalidArgument, "\(fraction)")
            #expect(Self.code { _ = try PurgeAction.trim(toFraction: fraction) } == .invalidArgument, "\(fraction)")
        }
        #expect(Self.code { try cache.setValue(1, forKey: 1, cost: -1) } == .invalidArgument)
        #expect(Self.code { try cache.setValue(1, forKey: 1, cost: .min) } == .invalidArgument)
        #expect(cache.count == 0)
        // The smallest fraction of a budget is a cost limit of 1, not 0 and not a trap.
        let system = try Self.system()
        system.register(cache)
        #expect(cache.costLimitInForce == 1)
        try cache.setValue(1, forKey: 1, cost: 1)
        #expect(cache.value(forKey: 1) == 1)
        // An entry whose cost alone exceeds the limit goes too, with what it pushed out.
        try cache.setValue(2, forKey: 2, cost: 2)
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
    }

    @Test func aCacheRegisteredTwiceWithOneSystemCountsOnceAndIsPurgedOnce() async throws {
        let system = try Self.system()
        let app = try system.register(.test("twice-registered")) { IdleDelegate() }
        let cache = try PurgeableCache<Int, Int>(name: "twice", owner: app.identifier, category: .images)
        let trimmed = try PurgeableCache<Int, Int>(name: "trimmed twice", owner: app.identifier, category: .rebuildableObjects)
        for registered in [cache, trimmed, cache, trimmed] {
            system.register(registered)
        }
        try cache.setValue(1, forKey: 1, cost: 1000)
        for key in 0..<100 {
            try trimmed.setValue(key, forKey: key, cost: 0)
        }
        #expect(system.footprint(of: app.identifier).declaredBytesOutsideHeap == 1000, "its cost counts once")
        // The system purges an app entering the background once it runs.
        let reports = try await system.purgeReports(ofEnteringTheBackground: app, untilSuspended: true)
        #expect(trimmed.count == 10, "trimmed once to 10%, not twice to 1%")
        let entries = reports.flatMap(\.entries).filter { $0.app == app.identifier }
        #expect(entries.count == 2, "one purge of each cache: \(entries)")
    }

    @Test func aCacheRegisteredWithTwoSystemsIsCountedByEach() throws {
        let first = try Self.system()
        let second = try Self.system()
        let cache = try PurgeableCache<Int, Int>(name: "shared", category: .rebuildableObjects)
        first.register(cache)
        second.register(cache)
        try cache.setValue(1, forKey: 1, cost: 10)
        #expect(first.footprint(of: .service).declaredBytesOutsideHeap == 10)
        #expect(second.footprint(of: .service).declaredBytesOutsideHeap == 10)
    }

    @Test func evictionHandlersThatReenterTheirCacheNeitherDeadlockNorCorruptIt() throws {
        let reentered = SharedLog<String>()
        let box = SharedBox<PurgeableCache<Int, Int>?>(nil)
        let cache = try PurgeableCache<Int, Int>(name: "reentrant", category: .rebuildableObjects, countLimit: 4) { key, _ in
            guard let cache = box.value else { return }
            reentered.append("evicted \(key)")
            _ = cache.value(forKey: key)
            _ = cache.count
            _ = cache.totalCost
            cache.removeValue(forKey: key + 1)
            if key == 0 {
                // Once: an insertion from the handler, which evicts in turn.
                try? cache.setValue(-1, forKey: 1000, cost: 1)
            }
            if key == 10 { cache.removeAll() }
            if key == 20 { _ = cache.purge(for: .critical) }
            if key == 30 { _ = try? cache.trim(toFraction: 0.5) }
        }
        box.value = cache
        let finished = SharedBox(false)
        for key in 0..<40 {
            try cache.setValue(key, forKey: key, cost: key)
            #expect(cache.count <= 4)
        }
        _ = cache.purge(for: .critical)
        finished.value = true
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
        #expect(!reentered.all.isEmpty)
        // Still usable.
        try cache.setValue(1, forKey: 1, cost: 1)
        #expect(cache.value(forKey: 1) == 1)
        #expect(cache.totalCost == 1)
    }

    // MARK: Heaps

    @Test func aHeapOfAnUnregisteredAppAndOfATerminatedOne() async throws {
        let system = try Self.system()
        // Made on first use, for any identifier, as documented.
        let stranger = try system.heap(for: .test("never-registered"))
        let bytes = try stranger.allocate(byteCount: 4096)
        #expect(system.footprint(of: .test("never-registered")).heapBytes == 4096)
        withExtendedLifetime(bytes) {}

        let app = try system.register(.test("heap-after-end")) { IdleDelegate() }
        try await app.launch()
        let heap = try system.heap(for: app.identifier)
        let buffer = try heap.allocate(byteCount: 8192)
        try await app.terminate(reason: .explicit)
        #expect(await eventually { (try? heap.allocate(byteCount: 4096)) == nil }, "the terminated app's heap is closed")
        do {
            _ = try heap.allocate(byteCount: 4096)
        } catch {
            #expect(error.code == .heapClosed)
        }
        // A buffer held past the termination stays valid memory until it is let go of.
        withExtendedLifetime(buffer) {}
        // The next use makes a new heap.
        let next = try system.heap(for: app.identifier)
        #expect(next !== heap)
        _ = try next.allocate(byteCount: 4096)
    }

    // MARK: Notifications

    @Test func observersThatRemoveAndPostDuringDeliveryDoSoInOrder() async throws {
        let system = try Self.system()
        let app = try system.register(.test("observers")) { IdleDelegate() }
        try await app.launch()
        let center = app.notificationCenter
        let heard = SharedLog<String>()
        let tokens = SharedBox<[ObservationToken]>([])
        tokens.value.append(center.addObserver(forName: "ping") { _, _ in
            heard.append("first")
            // Removes itself and the third; posts from inside an observer.
            center.removeObserver(tokens.value[0])
            center.removeObserver(tokens.value[2])
            center.post(name: "pong")
        })
        tokens.value.append(center.addObserver(forName: "ping") { _, _ in
            heard.append("second")
            tokens.value.append(center.addObserver(forName: "ping") { _, _ in heard.append("added during delivery") })
        })
        tokens.value.append(center.addObserver(forName: "ping") { _, _ in heard.append("third") })
        tokens.value.append(center.addObserver(forName: "pong") { _, _ in heard.append("pong") })
        center.post(name: "ping")
        #expect(await eventually { heard.all.contains("pong") })
        #expect(heard.all == ["first", "second", "pong"])
        heard.clear()
        center.post(name: "ping")
        #expect(await eventually { heard.all.count >= 2 })
        // A pong posted after the ping is delivered after all of it, in order: once it is heard, the
        // ping's delivery is over, and nothing more of it can come.
        center.post(name: "pong")
        #expect(await eventually { heard.all.contains("pong") })
        #expect(heard.all.dropLast() == ["second", "added during delivery"])
        #expect(heard.all.last == "pong")
        // Removing twice does nothing.
        center.removeObserver(tokens.value[0])
        center.removeObserver(tokens.value[0])
    }

    @Test func removingAnotherCentersTokenLeavesItsObserverInPlace() async throws {
        let system = try Self.system()
        let first = try system.register(.test("center-one")) { IdleDelegate() }
        let second = try system.register(.test("center-two")) { IdleDelegate() }
        try await first.launch()
        try await second.launch()
        let heard = SharedLog<String>()
        let secondsToken = second.notificationCenter.addObserver(forName: "ping") { _, _ in heard.append("second") }
        let eventsToken = system.lifecycleEvents.observe { _ in heard.append("event") }
        // Handed to the wrong center: not that center's observer, so nothing is removed.
        first.notificationCenter.removeObserver(secondsToken)
        first.notificationCenter.removeObserver(eventsToken)
        second.notificationCenter.post(name: "ping")
        #expect(await eventually { heard.all.contains("second") }, "the second app's observer still hears")
        try await first.deactivate()
        #expect(await eventually { heard.all.contains("event") }, "the event observer is still registered")
        withExtendedLifetime((secondsToken, eventsToken)) {}
    }
}

extension PublicAPIMisuseTests {
    // MARK: The system's and the monitor's settings

    @Test(arguments: [Duration.zero, .nanoseconds(-1), .seconds(-10)])
    func aLimitCheckIntervalOfZeroOrLessIsATypedErrorNotABusyMonitor(interval: Duration) async throws {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
        configuration.logger = silentLogger
        // A zero interval had the monitor read the cgroup's limit on every wake-up: a core busy.
        configuration.monitor.limitCheckInterval = interval
        let system = try MemorySystem(configuration: configuration)
        // A run that is not refused goes on until the hang guard cancels it.
        let error = await withDeadline(.seconds(30)) { await Self.error { try await system.run() } }
        #expect(error?.code == .invalidConfiguration)
        #expect(error.map { "\($0)".contains("limitCheckInterval") && "\($0)".contains("expected") } == true, "\(String(describing: error))")
        #expect(system.monitor.latestSample == nil, "the monitor did not start")
    }

    @Test func negativeSettleTimesAndRepeatIntervalsAreTypedErrors() async throws {
        for (settle, repeating) in [(Duration.seconds(-1), Duration.seconds(25)), (.seconds(5), .nanoseconds(-1))] {
            var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
            configuration.logger = silentLogger
            configuration.monitor.settleTime = settle
            configuration.monitor.repeatInterval = repeating
            let system = try MemorySystem(configuration: configuration)
            let error = await withDeadline(.seconds(30)) { await Self.error { try await system.run() } }
            #expect(error?.code == .invalidConfiguration, "settle \(settle), repeat \(repeating)")
        }
        // Zero is meaningful for both: announce a fall at once, repeat at every sample.
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
        configuration.logger = silentLogger
        configuration.monitor.settleTime = .zero
        configuration.monitor.repeatInterval = .zero
        let system = try MemorySystem(configuration: configuration)
        try await system.running {
            #expect(await eventually { system.monitor.latestSample != nil })
        }
    }

    @Test func anUnrecoverableDurationSetToZeroAfterItsInitializerIsATypedError() throws {
        for duration: Duration in [.zero, .seconds(-30)] {
            var unrecoverable = try Unrecoverable(after: .seconds(30), action: .exit(70))
            // The property is settable; a system must not take it as "give up at once".
            unrecoverable.duration = duration
            var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
            configuration.unrecoverable = unrecoverable
            let error = #expect(throws: MemoryPressureError.self) { _ = try MemorySystem(configuration: configuration) }
            #expect(error?.code == .invalidConfiguration)
            #expect(error.map { "\($0)".contains("expected") } == true)
        }
    }
}

extension PublicAPIMisuseTests {
    // MARK: Backing stores

    @Test func aRendererThatUsesItsStoreNeitherDeadlocksNorBlocksARelease() async throws {
        let system = try Self.system()
        let heap = try system.heap(for: .test("store-owner"))
        let seen = SharedLog<Int>()
        let box = SharedBox<BackingStore?>(nil)
        let store = try BackingStore(width: 64, height: 64, in: heap) { pixels in
            // The owner's code, reading and releasing the store it renders for.
            if let store = box.value {
                seen.append(store.byteCount)
                seen.append(store.release())
            }
            pixels.initializeMemory(as: UInt8.self, repeating: 7)
        }
        box.value = store
        let first = await withDeadline(.seconds(30)) {
            try? store.withPixels { pixels in pixels.allSatisfy { $0 == 7 } }
        }
        #expect(first == true, "rendered without a deadlock")
        #expect(seen.all == [0, 0], "nothing to release while the first rendering runs")
        #expect(store.byteCount == 64 * 64 * 4)
        #expect(heap.allocatedBytes == 64 * 64 * 4)
        box.value = nil
        #expect(store.release() == 64 * 64 * 4)
        #expect(heap.allocatedBytes == 0)
    }
}

extension PublicAPIMisuseTests {
    /// A service's own source that reads the monitor it feeds.
    struct MonitorReadingSource: MemorySampleSource {
        let monitor: SharedBox<PressureMonitor?>
        let reads: SharedLog<Bool>
        var name: String { "monitor-reading" }
        var depth: SampleDepth { .cheap }
        func read(into sample: inout MemorySample) throws {
            guard let monitor = monitor.value else { return }
            reads.append(monitor.judgesControlGroupWorkingSet)
            _ = monitor.level
            _ = monitor.budget
        }
    }

    @Test func aSampleSourceMayReadTheMonitorItFeeds() async throws {
        var configuration = try MemorySystem.Configuration.test(targetBytes: 1 << 33)
        configuration.logger = silentLogger
        let monitor = SharedBox<PressureMonitor?>(nil)
        let reads = SharedLog<Bool>()
        configuration.monitor.sources.append(MonitorReadingSource(monitor: monitor, reads: reads))
        let system = try MemorySystem(configuration: configuration)
        monitor.value = system.monitor
        try await system.running {
            // It trapped on the sampling thread: the sources are read under the sampler's lock,
            // which judgesControlGroupWorkingSet took again.
            #expect(await eventually { reads.all.count >= 3 })
        }
        monitor.value = nil
    }
}
