@testable import mempressure
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `mempressure stats` lists the kernel event sources a monitor arms on whatever machine runs the
/// tests, and the memory cgroup's OOM kill count.
struct StatsEventSourcesTests {
    struct Output: Decodable {
        struct Cgroup: Decodable {
            var layout: String
            var oomKillCount: Int?
            var oomKillSource: String?
        }
        struct EventSource: Decodable, Equatable {
            var name: String
            var state: String
            var path: String?
            var detail: String
        }
        var cgroup: Cgroup?
        var eventSources: [EventSource]
    }

    @Test func statsListsTheEventSourcesForThisLayout() throws {
        let snapshot = StatsSnapshot.take()
        let output = try JSONDecoder().decode(Output.self, from: Data(try snapshot.jsonText().utf8))
        let layout = try #require(output.cgroup?.layout)
        print("stats on this machine: layout \(layout); " + output.eventSources.map { "\($0.name) \($0.state)" }.joined(separator: ", "))
        #expect(output.eventSources.map(\.name) == ["PSI trigger", "memory.events watch", "memory.pressure_level", "limit file watch"])
        #expect(output.eventSources.allSatisfy { ["armed", "off", "not armed"].contains($0.state) && !$0.detail.isEmpty })
        let events = output.eventSources[1]
        let level = output.eventSources[2]
        let limits = output.eventSources[3]
        switch layout {
        case "v2":
            #expect(events.state != "off" && events.path?.hasSuffix("/memory.events") == true)
            #expect(level.state == "off")
            #expect(limits.state != "off" && limits.path?.hasSuffix("/memory.max") == true)
        case "v1", "hybrid":
            #expect(events.state == "off")
            #expect(level.state != "off" && level.path?.hasSuffix("/memory.pressure_level") == true)
            #expect(limits.state != "off" && limits.path?.hasSuffix("/memory.limit_in_bytes") == true)
        default:
            #expect(events.state == "off" && level.state == "off" && limits.state == "off")
        }
        if layout != "none" {
            #expect(output.cgroup?.oomKillSource?.hasSuffix(layout == "v2" ? "/memory.events" : "/memory.oom_control") == true)
        }

        let text = snapshot.text
        #expect(text.contains("\nevent sources\n"))
        for source in output.eventSources {
            #expect(text.contains("  " + source.name))
        }
    }
}
