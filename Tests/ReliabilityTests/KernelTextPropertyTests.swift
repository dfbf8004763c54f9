@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import PropertyBased
import Testing

/// Random text in place of the kernel files the sampler reads (PSI, cgroup limits and events, statm,
/// cgroup membership and mounts): each parser returns a value or nil (which the reader turns into a
/// `malformed` error naming the file), never crashes; what the kernel writes parses back exactly.
@Suite struct KernelTextPropertyTests {
    /// Inputs tried per parser: `count` of each text generator, then `count` round trips.
    static let count = 1_000

    @Test func garbageInKernelFilesIsRejectedWithoutCrashing() async {
        let tried = await BadInput.eachText(count: Self.count) { text in
            let stall = PressureStall.parse(text.utf8)
            if let stall {
                #expect([stall.some.average10, stall.full.average300].allSatisfy { (0...100).contains($0) })
            }
            if case .bytes(let bytes) = CgroupLimit(parsing: Substring(text)) {
                #expect(bytes >= 0)
            }
            if let events = ControlGroupEvents(parsing: text.utf8) {
                #expect(events.oomKill >= 0)
            }
            if let memory = ProcessMemory.parse(statm: Array(text.utf8), pageSize: 4096) {
                #expect(memory.residentBytes >= 0 && memory.residentBytes % 4096 == 0)
            }
            _ = ControlGroup.unifiedPath(inMembership: text)
            _ = ControlGroup.cgroup2Mount(inMountInfo: text)
        }
        #expect(tried == 3 * Self.count)
    }

    @Test func whatTheKernelWritesParsesBackExactly() async {
        let tally = InputTally()
        let percent = Gen.int(in: 0...10_000).map { Double($0) / 100 }
        let counter = Gen.int(in: 0...Int.max)
        await propertyCheck(count: Self.count, input: zip(percent, percent, percent), counter, counter, Gen.int(in: 0...(1 << 40))) { averages, total, eventCount, pages in
            tally.record()
            let figures = PressureStall.Figures(
                average10: averages.0, average60: averages.1, average300: averages.2, totalMicroseconds: UInt64(total)
            )
            let line = { (kind: String) in
                "\(kind) avg10=\(String(format2: averages.0)) avg60=\(String(format2: averages.1)) "
                    + "avg300=\(String(format2: averages.2)) total=\(total)"
            }
            #expect(PressureStall.parse((line("some") + "\n" + line("full") + "\n").utf8) == PressureStall(some: figures, full: figures))

            let limit = CgroupLimit.bytes(eventCount)
            #expect(CgroupLimit(parsing: Substring(limit.description)) == limit)
            #expect(CgroupLimit(parsing: "max") == .unlimited)

            let events = ControlGroupEvents(low: eventCount, high: pages, max: 1, oom: 0, oomKill: eventCount / 2)
            let eventsText = "low \(eventCount)\nhigh \(pages)\nmax 1\noom 0\noom_kill \(eventCount / 2)\noom_group_kill 0\n"
            #expect(ControlGroupEvents(parsing: eventsText.utf8) == events)

            let statm = "\(pages * 3) \(pages) \(pages / 2) 1 0 \(pages) 0\n"
            #expect(ProcessMemory.parse(statm: Array(statm.utf8), pageSize: 4096)
                == ProcessMemory(residentBytes: pages * 4096, virtualBytes: pages * 3 * 4096, sharedBytes: pages / 2 * 4096))
        }
        #expect(tally.total == Self.count)
    }
}

extension String {
    /// `value` with two decimals, as the kernel writes PSI averages (`0.25`, `12.00`).
    init(format2 value: Double) {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        self = "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
