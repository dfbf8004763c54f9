@testable import MemoryPressure
@testable import MemoryPressureMeasurement
import MemoryPressureTestKit
import Testing

/// The footprint the ladder decides by: after a termination, never more than the footprint before
/// it less what the victim returned; at the end of a run, a fresh measurement counted at most at
/// what the run counted.
struct LadderFootprintTests {
    static func sample(_ mebibytes: Int?) -> MemorySample {
        MemorySample(time: .now, residentBytes: mebibytes.map { $0 * mebibyte })
    }

    static func record(returning mebibytes: Int) -> TerminationRecord {
        TerminationRecord(
            app: .test("victim"), state: .suspended, footprintBytes: mebibytes * mebibyte, reason: .systemPressure,
            returnedBytes: mebibytes * mebibyte, time: .now, step: .terminateSuspended
        )
    }

    @Test func aTerminationIsCountedAtMostAtTheFootprintBeforeLessWhatTheVictimReturned() {
        let before = LadderFootprint(Self.sample(100))
        #expect(before.bytes == 100 * mebibyte)
        #expect(before.measuredAgain(Self.sample(95), after: Self.record(returning: 20)).bytes == 80 * mebibyte, "the measurement lags the kill")
        #expect(before.measuredAgain(Self.sample(70), after: Self.record(returning: 20)).bytes == 70 * mebibyte, "the measurement is lower")
        #expect(before.measuredAgain(Self.sample(95), after: nil).bytes == 95 * mebibyte, "no record: the measurement")
    }

    @Test func theEndOfARunConfirmsTheFootprintAtMostAtWhatTheRunCounted() {
        let counted = LadderFootprint(Self.sample(100)).measuredAgain(Self.sample(95), after: Self.record(returning: 20))
        #expect(counted.confirmed(by: Self.sample(90)).bytes == 80 * mebibyte, "a fresh reading that has not seen the victim go")
        #expect(counted.confirmed(by: Self.sample(60)).bytes == 60 * mebibyte, "a fresh reading that finds less")
        #expect(counted.confirmed(by: Self.sample(nil)).bytes == nil, "a reading that finds no footprint")
    }
}
