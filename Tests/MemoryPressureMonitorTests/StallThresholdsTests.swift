@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
import Testing

struct StallThresholdsTests {
    @Test(arguments: [
        (Double.nan, 10.0, "some avg10 nan%"),
        (0, 10, "some avg10 0.0%"),
        (-5, 10, "some avg10 -5.0%"),
        (10, 100.5, "full avg10 100.5%"),
        (10, .infinity, "full avg10 inf%"),
    ])
    func rejectsThresholdsThatAreNotAPercentage(_ some: Double, _ full: Double, _ named: String) {
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try StallThresholds(someAverage10ForWarning: some, fullAverage10ForCritical: full)
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.description == "stall threshold \(named) is out of range; expected a percentage greater than 0 and at most 100")
    }

    @Test func acceptsTheEndsOfTheRange() throws {
        let thresholds = try StallThresholds(someAverage10ForWarning: 0.01, fullAverage10ForCritical: 100)
        #expect(thresholds.someAverage10ForWarning == 0.01 && thresholds.fullAverage10ForCritical == 100)
        #expect(StallThresholds.standard == (try StallThresholds(someAverage10ForWarning: 10, fullAverage10ForCritical: 10)))
    }
}
