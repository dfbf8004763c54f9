@testable import MemoryPressureRuntime
import Testing

/// A ``Moment`` stands for an instant exactly: the sampling thread judges moments, and samples give
/// their users instants made back from them.
struct MomentTests {
    @Test(arguments: [Duration.zero, .nanoseconds(1), .seconds(-3), .milliseconds(10), .seconds(86_400 * 365)])
    func anInstantComesBackUnchanged(_ offset: Duration) {
        let instant = ContinuousClock.now + offset
        #expect(Moment(instant).instant == instant)
    }

    @Test func momentsOrderAndMeasureAsTheirInstantsDo() {
        let earlier = ContinuousClock.now
        let later = earlier + .microseconds(7)
        #expect(Moment(earlier) < Moment(later))
        #expect(Moment(later) - Moment(earlier) == .microseconds(7))
        #expect(Moment(earlier) + .microseconds(7) == Moment(later))
        #expect(Moment(earlier) == Moment(earlier))
    }
}
