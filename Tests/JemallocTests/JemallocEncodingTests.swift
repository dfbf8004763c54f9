#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Jemalloc
import MemoryPressureTestKit
import Testing

struct JemallocEncodingTests {
    @Test func statisticsEncodeTheirFiguresAsByteCountsAndDecodeBack() throws {
        let statistics = JemallocStatistics(allocated: 1, active: 2, resident: 3, mapped: 4, retained: 5, metadata: 6)
        #expect(try JSONValue.encoding(statistics) == [
            "allocatedBytes": 1, "activeBytes": 2, "residentBytes": 3, "mappedBytes": 4, "retainedBytes": 5,
            "metadataBytes": 6,
        ])
        #expect(try JSONDecoder().decode(JemallocStatistics.self, from: JSONEncoder().encode(statistics)) == statistics)
    }

    @Test func arenaStatisticsEncodeBytesAndPages() throws {
        let statistics = ArenaStatistics(
            smallAllocated: 1, largeAllocated: 2, activePages: 3, dirtyPages: 4, muzzyPages: 5, resident: 6, mapped: 7
        )
        #expect(try JSONValue.encoding(statistics) == [
            "smallAllocatedBytes": 1, "largeAllocatedBytes": 2, "activePages": 3, "dirtyPages": 4, "muzzyPages": 5,
            "residentBytes": 6, "mappedBytes": 7,
        ])
        #expect(try JSONDecoder().decode(ArenaStatistics.self, from: JSONEncoder().encode(statistics)) == statistics)
    }

    @Test func configurationEncodesEveryFigureAndDecodesBack() throws {
        let configuration = try JemallocConfiguration.current()
        let json = try JSONValue.encoding(configuration)
        #expect(json.keys == [
            "version", "statisticsEnabled", "automaticArenaCount", "arenaCount", "dirtyDecayMilliseconds",
            "muzzyDecayMilliseconds", "backgroundThread", "threadCache", "pageSizeBytes", "oversizeThresholdBytes",
        ])
        #expect(json["version"] == .string(configuration.version))
        #expect(json["pageSizeBytes"]?.number == Double(configuration.pageSize))
        #expect(json["statisticsEnabled"] == .bool(configuration.statisticsEnabled))
        #expect(try JSONDecoder().decode(JemallocConfiguration.self, from: JSONEncoder().encode(configuration)) == configuration)
    }
}
