#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Jemalloc
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import SystemPackage
import Testing

/// What the library's value types encode: stable keys, durations in seconds, instants in seconds
/// since boot, enums by name.
struct EncodingTests {
    /// The first figure of `/proc/uptime`: seconds since boot.
    private static func uptime() throws -> Double {
        let file = try FileDescriptor.open("/proc/uptime", .readOnly)
        let text = try file.closeAfter { String(decoding: try file.readToEnd(), as: UTF8.self) }
        return try #require(text.split(separator: " ").first.flatMap { Double($0) })
    }

    @Test func sampleEncodesItsFiguresFootprintAndTimes() throws {
        let stall = PressureStall.Figures(average10: 1.5, average60: 2, average300: 3, totalMicroseconds: 400)
        var sample = MemorySample(
            time: .now, residentBytes: 1000, cgroupCurrentBytes: 2000,
            jemalloc: JemallocStatistics(allocated: 1, active: 2, resident: 3, mapped: 4, retained: 5, metadata: 6),
            cgroupEvents: ControlGroupEvents(low: 1, high: 2, max: 3, oom: 4, oomKill: 5),
            pressureStall: PressureStall(some: stall, full: stall)
        )
        sample.samplingDuration = .milliseconds(1500)
        let json = try JSONValue.encoding(sample)
        let uptime = try Self.uptime()

        #expect(json.keys == [
            "time", "residentBytes", "cgroupCurrentBytes", "footprintBytes", "jemalloc", "cgroupEvents", "pressureStall",
            "samplingDurationSeconds",
        ])
        #expect(json["footprintBytes"] == 1000 && json["residentBytes"] == 1000 && json["cgroupCurrentBytes"] == 2000)
        #expect(json["samplingDurationSeconds"] == 1.5)
        let time = try #require(json["time"]?.number)
        #expect(abs(time - uptime) < 1, "time \(time) against /proc/uptime \(uptime)")
        #expect(json["jemalloc"]?["residentBytes"] == 3)
        #expect(json["cgroupEvents"] == ["low": 1, "high": 2, "max": 3, "oom": 4, "oomKill": 5])
        let figures: JSONValue = ["average10Percent": 1.5, "average60Percent": 2, "average300Percent": 3, "totalMicroseconds": 400]
        #expect(json["pressureStall"] == ["some": figures, "full": figures])
    }

    @Test func sampleLeavesOutWhatItDoesNotKnow() throws {
        let sample = MemorySample(time: .now - .seconds(10), jemalloc: JemallocStatistics(
            allocated: 1, active: 2, resident: 3, mapped: 4, retained: 5, metadata: 6
        ))
        let json = try JSONValue.encoding(sample)
        #expect(json.keys == ["time", "footprintBytes", "jemalloc"])
        #expect(json["footprintBytes"] == 3)
        let time = try #require(json["time"]?.number)
        #expect(abs(time - (try Self.uptime() - 10)) < 1)
    }

    @Test func stallAndEventsDecodeBack() throws {
        let figures = PressureStall.Figures(average10: 0.25, average60: 0.5, average300: 1, totalMicroseconds: 12)
        let stall = PressureStall(some: figures, full: figures)
        #expect(try JSONDecoder().decode(PressureStall.self, from: JSONEncoder().encode(stall)) == stall)
        let events = ControlGroupEvents(low: 1, high: 2, max: 3, oom: 4, oomKill: 5)
        #expect(try JSONDecoder().decode(ControlGroupEvents.self, from: JSONEncoder().encode(events)) == events)
        let memory = ProcessMemory(residentBytes: 1, virtualBytes: 2, sharedBytes: 3)
        #expect(try JSONValue.encoding(memory) == ["residentBytes": 1, "virtualBytes": 2, "sharedBytes": 3])
    }

    @Test func terminationRecordEncodesItsEnumsByName() throws {
        let record = TerminationRecord(
            app: try AppIdentifier("mail"), state: .suspended, footprintBytes: 4096, reason: .systemPressure,
            returnedBytes: 1024, time: .now, step: .terminateSuspended
        )
        let json = try JSONValue.encoding(record)
        #expect(json.keys == ["app", "state", "footprintBytes", "reason", "returnedBytes", "time", "step"])
        #expect(json["app"] == "mail" && json["state"] == "suspended" && json["reason"] == "systemPressure")
        #expect(json["step"] == "terminateSuspended")
        #expect(json["footprintBytes"] == 4096 && json["returnedBytes"] == 1024)

        var explicit = record
        explicit.reason = .explicit
        explicit.step = nil
        let withoutStep = try JSONValue.encoding(explicit)
        #expect(withoutStep["reason"] == "explicit" && withoutStep["step"] == nil)
    }

    @Test func enumsDecodeFromTheirNames() throws {
        for level in PressureLevel.allCases {
            #expect(try JSONValue.encoding([level]) == [.string(level.description)])
            #expect(try JSONDecoder().decode([PressureLevel].self, from: JSONEncoder().encode([level])) == [level])
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([PressureLevel].self, from: Data(#"["high"]"#.utf8))
        }
        #expect(try JSONValue.encoding(AppState.allCases) == .array(AppState.allCases.map { .string($0.description) }))
        #expect(try JSONValue.encoding(TerminationReason.allCases) == [
            "systemPressure", "perAppLimit", "deadline", "launchDeadline", "backgroundTaskExpired", "explicit",
            "processExited", "processKilled",
        ])
        #expect(try JSONDecoder().decode([ReclamationStep].self, from: Data(#"["purge"]"#.utf8)) == [.purge])
    }

    @Test func ladderRunEncodesDurationsInSecondsAndTimesSinceBoot() throws {
        let now = ContinuousClock.now
        let run = LadderRun(
            level: .critical, crossingTime: now - .seconds(2), startTime: now - .seconds(1), endTime: now,
            footprintBeforeBytes: 3000, footprintAfterBytes: 1000, targetBytes: 2000,
            steps: [LadderRun.Step(step: .terminateSuspended, duration: .milliseconds(1500), releasedBytes: 2000,
                                   terminated: [try AppIdentifier("mail")])],
            latency: .milliseconds(2250)
        )
        let json = try JSONValue.encoding(run)
        let uptime = try Self.uptime()
        #expect(json.keys == [
            "level", "crossingTime", "startTime", "endTime", "footprintBeforeBytes", "footprintAfterBytes", "targetBytes",
            "steps", "latencySeconds",
        ])
        #expect(json["level"] == "critical" && json["latencySeconds"] == 2.25 && json["targetBytes"] == 2000)
        #expect(json["steps"] == [
            ["step": "terminateSuspended", "durationSeconds": 1.5, "releasedBytes": 2000, "terminated": ["mail"]],
        ])
        let crossing = try #require(json["crossingTime"]?.number)
        let end = try #require(json["endTime"]?.number)
        #expect(abs(end - uptime) < 1)
        #expect(abs(end - crossing - 2) < 0.001)
    }

    @Test func purgeLatencyStatisticsEncodeASummaryInSeconds() throws {
        #expect(try JSONValue.encoding(PurgeLatencyStatistics()) == ["count": 0])
        var statistics = PurgeLatencyStatistics()
        for milliseconds in [500, 1500, 4000] {
            statistics.record(.milliseconds(milliseconds))
        }
        #expect(try JSONValue.encoding(statistics) == ["count": 3, "p50Seconds": 1.5, "p99Seconds": 4, "maxSeconds": 4])
    }
}
