@testable import mempressure
import Testing

struct DecimalTextTests {
    @Test(arguments: [
        (3.14159, 2, "3.14"),
        (0.5, 0, "1"),
        (-2.5, 0, "-3"),
        (-1.25, 1, "-1.3"),
        (-0.004, 2, "0.00"),
        (12, 3, "12.000"),
        (Double.infinity, 1, "inf"),
    ])
    func numbersHaveTheirPlacesRoundedHalfAwayFromZero(_ value: Double, _ places: Int, _ text: String) {
        #expect(DecimalText.format(value, places: places) == text)
    }
}
