@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
import Testing

/// The level policy, driven by scripted samples whose times are made up: no clock, no sleeping.
struct PressureLevelTrackerTests {
    static let mebibyte = 1 << 20
    /// 1000 MiB: warning from 800 MiB until below 700 MiB, critical from 950 MiB until below 850 MiB.
    static let budget = try! MemoryBudget(totalBytes: 1000 * mebibyte, limits: MemoryLimits(physicalBytes: 1 << 40))
    let start = ContinuousClock.now

    func tracker(settle: Duration = .seconds(5), repeating: Duration = .seconds(25)) -> PressureLevelTracker {
        PressureLevelTracker(budget: Self.budget, settleTime: settle, repeatInterval: repeating)
    }

    func sample(at seconds: Double, mebibytes: Int, stall: (some: Double, full: Double)? = nil) -> MemorySample {
        let figures = stall.map {
            PressureStall(
                some: .init(average10: $0.some, average60: 0, average300: 0, totalMicroseconds: 0),
                full: .init(average10: $0.full, average60: 0, average300: 0, totalMicroseconds: 0)
            )
        }
        return MemorySample(time: start + .seconds(seconds), residentBytes: mebibytes * Self.mebibyte, pressureStall: figures)
    }

    /// Feeds the samples and returns the announcements, as `(kind, level)`.
    func run(_ tracker: inout PressureLevelTracker, _ samples: [MemorySample]) -> [(PressureChange.Kind, PressureLevel)] {
        samples.compactMap { tracker.update(with: $0) }.map { ($0.kind, $0.level) }
    }

    @Test func risesThroughWarningAndCriticalAtOnce() {
        var tracker = tracker()
        let changes = run(&tracker, [
            sample(at: 0, mebibytes: 500), sample(at: 0.1, mebibytes: 799), sample(at: 0.2, mebibytes: 800),
            sample(at: 0.3, mebibytes: 900), sample(at: 0.4, mebibytes: 950),
        ])
        #expect(changes.map(\.0) == [.rise, .rise])
        #expect(changes.map(\.1) == [.warning, .critical])
        #expect(tracker.level == .critical)
    }

    @Test func jumpsStraightToCritical() {
        var tracker = tracker()
        let change = tracker.update(with: sample(at: 0, mebibytes: 990))
        #expect(change?.previous == .normal)
        #expect(change?.level == .critical)
    }

    @Test func hysteresisHoldsTheLevelUntilBelowRecovery() {
        var tracker = tracker(settle: .zero)
        _ = tracker.update(with: sample(at: 0, mebibytes: 820))
        // Below the warning threshold but above its recovery threshold: still warning.
        #expect(run(&tracker, [sample(at: 10, mebibytes: 750), sample(at: 20, mebibytes: 701)]).isEmpty)
        #expect(tracker.level == .warning)
        let fall = run(&tracker, [sample(at: 21, mebibytes: 699)])
        #expect(fall.map(\.0) == [.fall])
        #expect(tracker.level == .normal)

        _ = tracker.update(with: sample(at: 30, mebibytes: 960))
        #expect(run(&tracker, [sample(at: 31, mebibytes: 900), sample(at: 32, mebibytes: 851)]).isEmpty)
        #expect(tracker.level == .critical)
        // Below critical recovery but above warning recovery: down to warning, not normal.
        #expect(run(&tracker, [sample(at: 33, mebibytes: 720)]).map(\.1) == [.warning])
    }

    @Test func settleTimeDelaysAFall() {
        var tracker = tracker(settle: .seconds(5))
        _ = tracker.update(with: sample(at: 0, mebibytes: 960))
        #expect(run(&tracker, [sample(at: 1, mebibytes: 100), sample(at: 3, mebibytes: 100), sample(at: 5.9, mebibytes: 100)]).isEmpty)
        #expect(tracker.level == .critical)
        let fall = tracker.update(with: sample(at: 6, mebibytes: 100))
        #expect(fall?.kind == .fall)
        #expect(fall?.previous == .critical)
        #expect(fall?.level == .normal)
    }

    @Test func aReboundRestartsTheSettleTime() {
        var tracker = tracker(settle: .seconds(5))
        _ = tracker.update(with: sample(at: 0, mebibytes: 820))
        _ = tracker.update(with: sample(at: 1, mebibytes: 100))
        _ = tracker.update(with: sample(at: 4, mebibytes: 790))  // back inside warning's band: the fall is off
        #expect(tracker.update(with: sample(at: 7, mebibytes: 100)) == nil)
        #expect(tracker.update(with: sample(at: 11.9, mebibytes: 100)) == nil)
        #expect(tracker.update(with: sample(at: 12, mebibytes: 100))?.level == .normal)
    }

    @Test func repeatsAreSpaced() {
        var tracker = tracker(repeating: .seconds(25))
        let times: [Double] = [0, 5, 10, 24.9, 25, 30, 49.9, 50, 51]
        let changes = run(&tracker, times.map { sample(at: $0, mebibytes: 850) })
        #expect(changes.map(\.0) == [.rise, .repeated, .repeated])
        #expect(changes.allSatisfy { $0.1 == .warning })
    }

    @Test func normalIsNeverRepeated() {
        var tracker = tracker(repeating: .seconds(1))
        #expect(run(&tracker, (0..<10).map { sample(at: Double($0) * 5, mebibytes: 100) }).isEmpty)
    }

    @Test func stallRaisesTheLevelOnItsOwn() {
        var tracker = tracker(settle: .seconds(5))
        #expect(tracker.update(with: sample(at: 0, mebibytes: 100, stall: (some: 2, full: 0))) == nil)
        #expect(tracker.update(with: sample(at: 1, mebibytes: 100, stall: (some: 12, full: 1)))?.level == .warning)
        #expect(tracker.update(with: sample(at: 2, mebibytes: 100, stall: (some: 40, full: 15)))?.level == .critical)
        #expect(tracker.update(with: sample(at: 3, mebibytes: 100, stall: (some: 0, full: 0))) == nil)
        #expect(tracker.update(with: sample(at: 8, mebibytes: 100, stall: (some: 0, full: 0)))?.level == .normal)
    }

    @Test func customStallThresholdsDecideTheLevel() throws {
        let thresholds = try StallThresholds(someAverage10ForWarning: 30, fullAverage10ForCritical: 5)
        var tracker = PressureLevelTracker(budget: Self.budget, stallThresholds: thresholds)
        #expect(tracker.update(with: sample(at: 0, mebibytes: 100, stall: (some: 20, full: 0))) == nil, "20 % some stall is under the 30 % threshold")
        #expect(tracker.update(with: sample(at: 1, mebibytes: 100, stall: (some: 30, full: 0)))?.level == .warning)
        #expect(tracker.update(with: sample(at: 2, mebibytes: 100, stall: (some: 30, full: 5)))?.level == .critical)
    }

    @Test func stallIsIgnoredWithoutThresholds() {
        var tracker = PressureLevelTracker(budget: Self.budget, stallThresholds: nil)
        #expect(tracker.update(with: sample(at: 0, mebibytes: 100, stall: (some: 90, full: 90))) == nil)
        #expect(tracker.level == .normal)
    }

    @Test func unknownFootprintKeepsTheLevel() {
        var tracker = tracker(settle: .zero)
        _ = tracker.update(with: sample(at: 0, mebibytes: 900))
        #expect(tracker.update(with: MemorySample(time: start + .seconds(10))) == nil)
        #expect(tracker.level == .warning)
    }
}

extension PressureLevelTrackerTests {
    @Test func samplesWithoutStallKeepTheStallLevel() {
        var tracker = tracker(settle: .seconds(1))
        #expect(tracker.update(with: sample(at: 0, mebibytes: 100, stall: (some: 50, full: 20)))?.level == .critical)
        // Cheap samples carry no stall reading: they must not count as the stall having ended.
        #expect(run(&tracker, (1...5).map { sample(at: Double($0), mebibytes: 100) }).isEmpty)
        #expect(tracker.level == .critical)
    }
}
