@testable import MemoryPressureRuntime
@testable import MemoryPressureMonitor
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Synchronization
import Testing

/// The process apps' children's footprints, kept as they move: a frozen child is read once, a
/// running one on every sample, and the sum follows each reading and each child that comes or goes
/// without summing them all again. The children are stand-ins whose figures the test sets and whose
/// readings it counts.
struct ChildFootprintsTests {
    /// A child's footprint as a test sets it, and how often it was read; nil once it has "ended".
    final class StandIn: Sendable {
        private let state = Mutex<(bytes: Int?, reads: Int)>((nil, 0))

        init(bytes: Int) {
            state.withLock { $0.bytes = bytes }
        }

        var bytes: Int? {
            get { state.withLock { $0.bytes } }
            set { state.withLock { $0.bytes = newValue } }
        }

        var reads: Int { state.withLock { $0.reads } }

        @Sendable func read() -> Int? {
            state.withLock { state in
                state.reads += 1
                return state.bytes
            }
        }
    }

    /// `count` stand-ins of 1, 2, ... MiB, tracked in `footprints` as apps `child-0`, `child-1`, ...
    static func track(_ count: Int, in footprints: ChildFootprints) -> [StandIn] {
        (0..<count).map { index in
            let child = StandIn(bytes: (index + 1) * mebibyte)
            footprints.track(.test("child-\(index)"), read: child.read)
            return child
        }
    }

    @Test func noChildIsNoFigureAndEveryChildCountsOnceRead() {
        let footprints = ChildFootprints()
        #expect(footprints.totalBytes(reading: .changing) == nil)
        let children = Self.track(3, in: footprints)
        #expect(footprints.totalBytes(reading: .nothing) == 0, "tracked, not yet read")
        #expect(footprints.totalBytes(reading: .changing) == 6 * mebibyte)
        #expect(children.allSatisfy { $0.reads == 1 })
        for index in 0..<3 { footprints.remove(.test("child-\(index)")) }
        #expect(footprints.totalBytes(reading: .changing) == nil)
    }

    @Test func aFrozenChildIsReadOnceAsItIsFrozenAndAgainOnlyOnceThawed() {
        let footprints = ChildFootprints()
        let children = Self.track(3, in: footprints)
        footprints.freeze(.test("child-1"))
        #expect(children[1].reads == 1, "read as it is frozen")
        // Its figure, changed behind the ledger's back, is not read while it is frozen.
        children[1].bytes = 20 * mebibyte
        for _ in 0..<5 {
            #expect(footprints.totalBytes(reading: .changing) == 6 * mebibyte)
        }
        #expect(children[1].reads == 1)
        #expect(children[0].reads == 5 && children[2].reads == 5, "the running ones, on every sample")
        #expect(footprints.bytes(of: .test("child-1")) == 2 * mebibyte)
        #expect(children[1].reads == 1, "its app's figure is the one read as it was frozen")
        // The reference reads it again, kept or not.
        #expect(footprints.totalBytes(reading: .everything) == 24 * mebibyte)
        // Frozen again (what changes a frozen child's memory does so), it is read again and kept so.
        children[1].bytes = 5 * mebibyte
        footprints.freeze(.test("child-1"))
        #expect(footprints.totalBytes(reading: .changing) == 9 * mebibyte)
        #expect(children[1].reads == 3)
        // Thawed, it is read on every sample again.
        footprints.thaw(.test("child-1"))
        children[1].bytes = 7 * mebibyte
        #expect(footprints.totalBytes(reading: .changing) == 11 * mebibyte)
        #expect(footprints.bytes(of: .test("child-1")) == 7 * mebibyte)
    }

    @Test func theSumFollowsEachReadingAndEachChildThatGoesWithoutReadingTheOthers() {
        let footprints = ChildFootprints()
        let children = Self.track(10, in: footprints)
        for index in 0..<10 { footprints.freeze(.test("child-\(index)")) }
        #expect(footprints.totalBytes(reading: .changing) == 55 * mebibyte)
        let readsBefore = children.map(\.reads)
        // The largest goes: the sum loses its figure as last read, and nothing is read.
        footprints.remove(.test("child-9"))
        #expect(footprints.totalBytes(reading: .nothing) == 45 * mebibyte)
        #expect(children.map(\.reads) == readsBefore, "no child read again")
        // A child that goes while it is being read is not counted again by that reading.
        footprints.thaw(.test("child-0"))
        children[0].bytes = 3 * mebibyte
        #expect(footprints.totalBytes(reading: .changing) == 47 * mebibyte)
        footprints.remove(.test("child-0"))
        #expect(footprints.bytes(of: .test("child-0")) == nil)
        #expect(footprints.totalBytes(reading: .changing) == 44 * mebibyte)
        // A child replaced by a new one (a relaunch) counts once, at the new one's figure.
        let relaunched = StandIn(bytes: 100 * mebibyte)
        footprints.track(.test("child-1"), read: relaunched.read)
        #expect(footprints.totalBytes(reading: .changing) == 142 * mebibyte)
    }

    @Test func anEndedChildCountsAtItsLastFigureUntilItGoes() {
        let footprints = ChildFootprints()
        let children = Self.track(2, in: footprints)
        #expect(footprints.bytes(of: .test("child-1")) == 2 * mebibyte)
        children[1].bytes = nil
        #expect(footprints.bytes(of: .test("child-1")) == 2 * mebibyte, "what it held")
        #expect(footprints.totalBytes(reading: .changing) == 3 * mebibyte)
        footprints.remove(.test("child-1"))
        #expect(footprints.totalBytes(reading: .changing) == mebibyte)
    }

    /// Readings on several threads while children freeze, thaw and go: the sum is every remaining
    /// child's figure, exactly, once they are all read again.
    @Test func readingsOnManyThreadsWhileChildrenMoveLeaveTheExactSum() async {
        let footprints = ChildFootprints()
        let children = Self.track(200, in: footprints)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    for _ in 0..<200 { _ = footprints.totalBytes(reading: .changing) }
                }
            }
            group.addTask {
                for index in 0..<200 {
                    footprints.freeze(.test("child-\(index)"))
                    if index % 2 == 0 { footprints.thaw(.test("child-\(index)")) }
                    if index % 5 == 0 { footprints.remove(.test("child-\(index)")) }
                }
            }
        }
        let remaining = (0..<200).filter { $0 % 5 != 0 }
        let expected = remaining.reduce(0) { $0 + (children[$1].bytes ?? 0) }
        #expect(footprints.totalBytes(reading: .everything) == expected)
        #expect(footprints.totalBytes(reading: .nothing) == expected)
    }
}
