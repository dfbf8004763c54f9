import MemoryPressure
import Testing

struct StallThresholdsTests {
    static let mebibyte = 1 << 20
    static let budget = try! MemoryBudget(totalBytes: 1000 * mebibyte, limits: MemoryLimits(physicalBytes: 1 << 40))

    func sample(some: Double, full: Double) -> MemorySample {
        let stall = PressureStall(
            some: .init(average10: some, average60: 0, average300: 0, totalMicroseconds: 0),
            full: .init(average10: full, average60: 0, average300: 0, totalMicroseconds: 0)
        )
        return MemorySample(time: .now, residentBytes: 100 * Self.mebibyte, pressureStall: stall)
    }

    @Test func customThresholdsDecideTheLevel() throws {
        let thresholds = try StallThresholds(someAverage10ForWarning: 30, fullAverage10ForCritical: 5)
        var tracker = PressureLevelTracker(budget: Self.budget, stallThresholds: thresholds)
        #expect(tracker.update(with: sample(some: 20, full: 0)) == nil, "20 % some stall is under the 30 % threshold")
        #expect(tracker.update(with: sample(some: 30, full: 0))?.level == .warning)
        #expect(tracker.update(with: sample(some: 30, full: 5))?.level == .critical)
    }

    @Test(arguments: [
        (Double.nan, 10.0, "some avg10 nan%"),
        (0, 10, "some avg10 0.0%"),
        (-5, 10, "some avg10 -5.0%"),
        (10, 100.5, "full avg10 100.5%"),
        (10, .infinity, "full avg10 inf%"),
    ])
    func rejectsThresholdsThatAreNotAPercentage(_ some: Double, _ full: Double, _ named: String) {
        #expect {
            _ = try StallThresholds(someAverage10ForWarning: some, fullAverage10ForCritical: full)
        } throws: { error in
            let description = (error as? StallThresholdsError)?.description ?? ""
            return description.contains(named) && description.contains("expected a percentage greater than 0 and at most 100")
        }
    }

    @Test func acceptsTheEndsOfTheRange() throws {
        let thresholds = try StallThresholds(someAverage10ForWarning: 0.01, fullAverage10ForCritical: 100)
        #expect(thresholds.someAverage10ForWarning == 0.01 && thresholds.fullAverage10ForCritical == 100)
        #expect(StallThresholds.standard == (try StallThresholds(someAverage10ForWarning: 10, fullAverage10ForCritical: 10)))
    }
}
