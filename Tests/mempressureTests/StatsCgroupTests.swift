@testable import mempressure
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `mempressure stats --json` on whatever machine runs the tests.
struct StatsCgroupTests {
    struct Output: Decodable {
        struct Cgroup: Decodable {
            struct Version2: Decodable {
                var directory: String
                var currentBytes: Int?
            }
            struct Version1: Decodable {
                var directory: String
                var usageBytes: Int?
                var totalInactiveFileBytes: Int?
                var workingSetBytes: Int?
            }
            var layout: String
            var reason: String?
            var v2: Version2?
            var v1: Version1?
            var effectiveLimitBytes: Int?
            var effectiveLimitSource: String?
            var automaticBudgetBytes: Int?
            var automaticBudgetSource: String
        }
        var cgroup: Cgroup?
    }

    /// The lines of a text file.
    static func lines(of path: String) -> [String] {
        guard let file = fopen(path, "r") else { return [] }
        defer { fclose(file) }
        var lines: [String] = []
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        while getline(&line, &capacity, file) > 0, let line {
            lines.append(String(cString: line).split(separator: "\n").first.map(String.init) ?? "")
        }
        free(line)
        return lines
    }

    /// The v1 memory path and the cgroup2 path that `/proc/self/cgroup` names, read here without the library.
    static func membership() -> (memoryPath: String?, unifiedPath: String?) {
        var memoryPath: String?
        var unifiedPath: String?
        for line in lines(of: "/proc/self/cgroup") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            if fields[0] == "0" { unifiedPath = String(fields[2]) }
            if fields[1].split(separator: ",").contains("memory") { memoryPath = String(fields[2]) }
        }
        return (memoryPath, unifiedPath)
    }

    @Test func statsJSONFindsTheMemoryControllerAndSaysWhichLayout() throws {
        let json = try StatsSnapshot.take().jsonText()
        let output = try JSONDecoder().decode(Output.self, from: Data(json.utf8))
        let cgroup = try #require(output.cgroup)
        let (memoryPath, unifiedPath) = Self.membership()
        print("stats --json on this machine: layout \(cgroup.layout), memory cgroup \(cgroup.v1?.directory ?? cgroup.v2?.directory ?? "none (\(cgroup.reason ?? ""))")")
        if let memoryPath {
            // /proc/self/cgroup names a v1 memory controller: stats must find it, on v1 alone or beside cgroup2.
            let cgroup2Mounted = Self.lines(of: "/proc/self/mountinfo").contains { $0.contains(" - cgroup2 ") }
            #expect(cgroup.layout == (cgroup2Mounted ? "hybrid" : "v1"))
            let v1 = try #require(cgroup.v1)
            #expect(memoryPath == "/" || v1.directory.hasSuffix(memoryPath))
            #expect(v1.usageBytes ?? 0 > 0)
            #expect(v1.totalInactiveFileBytes != nil)
            #expect(v1.workingSetBytes != nil)
            #expect(cgroup.v2 == nil)
        } else if cgroup.layout == "v2" {
            #expect(unifiedPath != nil)
            #expect(try #require(cgroup.v2).currentBytes ?? 0 > 0)
        } else {
            #expect(cgroup.layout == "none")
            #expect(cgroup.reason != nil)
        }
        #expect((cgroup.effectiveLimitBytes == nil) == (cgroup.effectiveLimitSource == nil))
        #expect(cgroup.automaticBudgetBytes ?? 0 > 0)
        #expect(cgroup.automaticBudgetSource == "90% of " + (cgroup.effectiveLimitSource ?? "physical memory"))
    }
}
