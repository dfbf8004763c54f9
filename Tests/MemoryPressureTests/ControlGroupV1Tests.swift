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

struct ControlGroupV1Tests {
    static let unlimited = "9223372036854771712"

    static func stat(limit: String, inactiveFile: String) -> String {
        """
        cache 1236992
        rss 1933312
        inactive_file 57344
        hierarchical_memory_limit \(limit)
        hierarchical_memsw_limit 9223372036854771712
        total_cache 1236992
        total_rss 1933312
        total_inactive_file \(inactiveFile)
        total_active_file 1179648

        """
    }

    @Test func readsTheFiguresOfADirectory() throws {
        let directory = try TemporaryDirectory()
        try directory.write("memory.usage_in_bytes", "3248128\n")
        try directory.write("memory.limit_in_bytes", "536870912\n")
        try directory.write("memory.soft_limit_in_bytes", "\(Self.unlimited)\n")
        try directory.write("memory.stat", Self.stat(limit: "268435456", inactiveFile: "57344"))
        let group = ControlGroupV1(directory: directory.path)
        #expect(try group.usageBytes() == 3_248_128)
        #expect(try group.limit() == .bytes(512 << 20))
        #expect(try group.softLimit() == .unlimited)
        let statistics = try group.statistics()
        #expect(statistics == ControlGroupV1Statistics(hierarchicalLimit: .bytes(256 << 20), totalInactiveFileBytes: 57344))
        #expect(statistics.workingSetBytes(usageBytes: 3_248_128) == 3_248_128 - 57344)
        #expect(statistics.workingSetBytes(usageBytes: 4096) == 0)
    }

    @Test func keptOpenFilesAreReadAgainFresh() throws {
        let directory = try TemporaryDirectory()
        try directory.write("memory.usage_in_bytes", "100\n")
        try directory.write("memory.stat", Self.stat(limit: Self.unlimited, inactiveFile: "10"))
        let group = ControlGroupV1(directory: directory.path)
        let usage = try OpenKernelFile(group.path("memory.usage_in_bytes"))
        let stat = try OpenKernelFile(group.path("memory.stat"))
        #expect(try ControlGroupV1.usageBytes(from: usage) == 100)
        #expect(try ControlGroupV1Statistics.read(from: stat).totalInactiveFileBytes == 10)
        try directory.write("memory.usage_in_bytes", "200\n")
        try directory.write("memory.stat", Self.stat(limit: "4096", inactiveFile: "20"))
        #expect(try ControlGroupV1.usageBytes(from: usage) == 200)
        #expect(try ControlGroupV1Statistics.read(from: stat) == ControlGroupV1Statistics(hierarchicalLimit: .bytes(4096), totalInactiveFileBytes: 20))
    }

    @Test(arguments: [
        ("9223372036854771712", CgroupLimit.unlimited),  // LONG_MAX rounded down to 4 KiB pages
        ("9223372036854710272", .unlimited),  // rounded down to 64 KiB pages
        ("9223372036854775807", .unlimited),
        ("0", .bytes(0)),
        ("1073741824", .bytes(1 << 30)),
    ])
    func parsesVersion1Limits(_ text: String, _ limit: CgroupLimit) {
        #expect(CgroupLimit(parsingVersion1: Substring(text)) == limit)
    }

    @Test(arguments: ["", "-1", "max", "1.5", "18446744073709551616"])
    func rejectsMalformedVersion1Limits(_ text: String) {
        #expect(CgroupLimit(parsingVersion1: Substring(text)) == nil)
    }

    @Test func malformedAndIncompleteFilesAreTypedErrors() throws {
        let directory = try TemporaryDirectory()
        try directory.write("memory.limit_in_bytes", "lots\n")
        try directory.write("memory.stat", "cache 1\nrss 2\n")
        let group = ControlGroupV1(directory: directory.path)
        let malformed = #expect(throws: MemoryPressureError.self) { _ = try group.limit() }
        #expect(malformed?.description == "\(directory.path.appending("memory.limit_in_bytes")) is malformed: \"lots\"")
        let incomplete = #expect(throws: MemoryPressureError.self) { _ = try group.statistics() }
        #expect(incomplete?.code == .measurementFailed)
        #expect(incomplete?.description == "\(directory.path.appending("memory.stat")) is malformed: \"cache 1\\nrss 2\\n\"")
        let missing = #expect(throws: MemoryPressureError.self) { _ = try group.usageBytes() }
        #expect(missing?.code == .measurementUnavailable)
    }

    @Test func theSampleSourceReadsVersion1Usage() throws {
        let directory = try TemporaryDirectory()
        try directory.write("memory.usage_in_bytes", "8192\n")
        try directory.write("memory.stat", Self.stat(limit: Self.unlimited, inactiveFile: "4096"))
        let source = ControlGroupSampleSource(version1: ControlGroupV1(directory: directory.path))
        var sample = MemorySample(time: .now, residentBytes: 0)
        try source.read(into: &sample)
        #expect(sample.cgroupCurrentBytes == 8192)
        #expect(sample.cgroupEvents == nil)
        #expect(source.name == "cgroup v1 \(directory.path)")
    }
}
