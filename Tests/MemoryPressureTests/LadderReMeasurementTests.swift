#if canImport(Glibc)
import Glibc
#endif
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMonitor
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// The ladder re-measures only what changed: after each termination it reads the process's own
/// figures and takes the process apps' children as last read, the victim's figure gone from their
/// sum. It must decide as it did when it read every child again: the same victims, in the same
/// order, each chosen at the same footprint, for the same fleet.
///
/// The children here are stand-ins (``ChildFootprintsTests/StandIn``) counted in the process apps'
/// footprints for in-process apps, each frozen as its app is suspended, as a real child is: the
/// fleet is the same, figure for figure, for both ways of measuring, and a thousand of them cost no
/// processes. `ProcessAppTests` compares the two on ten real children.
struct LadderReMeasurementTests {
    /// What a ladder did to a fleet.
    struct Outcome: Equatable {
        /// The apps it terminated, in order.
        var victims: [String]
        /// The footprint it counted as it chose each.
        var decisions: [Int?]
    }

    @Test(arguments: [10, 1_000])
    func readingNoOtherChildAfterAVictimDecidesAsReadingEveryChildAgain(children count: Int) async throws {
        let (reference, referenceReads) = try await Self.ladder(children: count, reading: .everything)
        let (kept, keptReads) = try await Self.ladder(children: count, reading: .nothing)
        #expect(kept == reference)
        // Largest first, more than one victim: the fleet makes the ladder decide more than once.
        let expected = (0..<count).sorted { Self.size($0, of: count) > Self.size($1, of: count) }.prefix(reference.victims.count)
        #expect(reference.victims == expected.map { "child-\($0)" })
        #expect(reference.victims.count > 1 && reference.victims.count < count)
        // Reading every child again costs a reading of each remaining child per victim; the default
        // reads none of the frozen children once they are frozen.
        let victims = reference.victims.count
        #expect(referenceReads >= victims * (count - victims))
        #expect(keptReads == 0)
    }

    /// Child `index`'s figure in a fleet of `count`: every one different, in no order of the index.
    static func size(_ index: Int, of count: Int) -> Int {
        ((index * 7_919) % count + 1) * (count <= 10 ? 2 * mebibyte : 256)
    }

    /// A fleet of `count` suspended apps with frozen stand-in children, and the host's own figure
    /// set so that the ladder, at critical, must terminate about a third of them: what it did, and
    /// how many readings of the children it made, re-measuring with `reading`.
    static func ladder(children count: Int, reading: ContributionReading) async throws -> (Outcome, reads: Int) {
        let source = ScriptedSampleSource(residentBytes: 0)
        var configuration = try MemorySystem.Configuration.test(targetBytes: 256 * mebibyte, logger: silentLogger)
        configuration.monitor.sources = [source]
        configuration.childrenReadAfterEachVictim = reading
        let system = try MemorySystem(configuration: configuration)
        var children: [ChildFootprintsTests.StandIn] = []
        for index in 0..<count {
            let app = try system.register(.test("child-\(index)")) { IdleDelegate() }
            try await app.launch()
            let child = ChildFootprintsTests.StandIn(bytes: size(index, of: count))
            system.processes.footprints.track(app.identifier, read: child.read)
            #expect(try await app.enterBackground() == .suspended)
            system.processes.footprints.freeze(app.identifier)
            children.append(child)
        }
        let total = (0..<count).reduce(0) { $0 + size($1, of: count) }
        // Half the children's bytes over the target, and over critical.
        let resident = system.targetBytes - total / 2
        try #require(resident > 0 && resident + total >= system.budget.bytes(enteringAbove: .critical))
        let readsBefore = children.reduce(0) { $0 + $1.reads }
        let events = system.events.stream()
        let run = try await system.running {
            source.set(residentBytes: resident, stall: nil)
            let run = await events.first(within: generousDeadline) { $0.runUnderTarget != nil }
            // The ladder done with a later sample: nothing more is terminated.
            #expect(await system.ladderHasHandledASampleAtTheTimeNow())
            return run
        }
        try #require(run != nil, "the ladder brought the footprint under target")
        let reads = children.reduce(0) { $0 + $1.reads } - readsBefore
        let records = system.terminations
        // The children's sum, kept as the victims left it, is the remaining children's figures.
        let remaining = (0..<count).filter { index in !records.contains { $0.app.rawValue == "child-\(index)" } }
        #expect(system.monitor.measure(.nothing).processAppBytes == remaining.reduce(0) { $0 + size($1, of: count) })
        _ = await system.shutDown()
        let outcome = Outcome(victims: records.map(\.app.rawValue), decisions: records.map { $0.decision?.footprintBytes })
        return (outcome, reads)
    }
}

extension ChildProcessTests.ProcessAppTests {
    /// Ten real children, each holding a different amount, twice: the ladder that takes the other
    /// children as last read after each victim terminates the ones the ladder that reads every child
    /// again does, in the same order, largest first.
    @Test func tenRealChildrenLoseTheSameVictimsInTheSameOrderWhicheverWayTheLadderMeasures() async throws {
        let reference = try await Self.ladderVictims(reading: .everything)
        let kept = try await Self.ladderVictims(reading: .nothing)
        #expect(kept == reference)
        #expect(reference.count > 1 && reference.count < 10, "\(reference)")
    }

    /// Ten children of 2 to 20 MiB, suspended and frozen, and the host's own figure set so that the
    /// ladder, at critical, must free half their bytes: the apps it terminated, in order, each
    /// checked to be the largest left and chosen above the target.
    static func ladderVictims(reading: ContributionReading) async throws -> [String] {
        let source = ScriptedSampleSource(residentBytes: 0)
        var systemConfiguration = try MemorySystem.Configuration.test(targetBytes: 256 * mebibyte, logger: silentLogger)
        systemConfiguration.monitor.sources = [source]
        systemConfiguration.childrenReadAfterEachVictim = reading
        let system = try MemorySystem(configuration: systemConfiguration)
        let directory = try TemporaryDirectory()
        var apps: [App] = []
        for index in 0..<10 {
            let filled = directory.path.appending("filled-\(index)").string
            let bytes = LadderReMeasurementTests.size(index, of: 10)
            let app = try system.register(
                .test("child-\(index)"), process: .shell("x=$(head -c \(bytes) /dev/zero | tr '\\0' a); touch \(filled); while :; do sleep 1; done"),
                configuration: Self.configuration
            )
            try await app.launch()
            #expect(await eventually { access(filled, F_OK) == 0 }, "child-\(index) holds its memory")
            apps.append(app)
        }
        for app in apps {
            #expect(try await app.enterBackground() == .suspended)
        }
        let figures = Dictionary(uniqueKeysWithValues: apps.map { ($0.identifier.rawValue, system.footprint(of: $0.identifier).processBytes) })
        let total = figures.values.reduce(0, +)
        let resident = system.targetBytes - total / 2
        try #require(resident + total >= system.budget.bytes(enteringAbove: .critical))
        let events = system.events.stream()
        try await system.running {
            source.set(residentBytes: resident, stall: nil)
            #expect(await events.first(within: generousDeadline) { $0.runUnderTarget != nil } != nil, "the ladder brought the footprint under target")
            #expect(await system.ladderHasHandledASampleAtTheTimeNow())
        }
        let records = system.terminations
        await system.shutDown()
        let victims = records.map(\.app.rawValue)
        let largestFirst = figures.sorted { $0.value > $1.value }.prefix(victims.count).map(\.key)
        #expect(victims == largestFirst, "largest first: \(figures)")
        #expect(records.allSatisfy { ($0.decision?.footprintBytes ?? 0) > system.targetBytes })
        return victims
    }
}
