import ArgumentParser
import Jemalloc
import MemoryPressure

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `mempressure stats`: one reading of every figure the system decides on.
struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print jemalloc's statistics and configuration, the process's memory, the cgroup's limits and PSI."
    )

    @Flag(help: "Print JSON with exact byte counts instead of labelled text.")
    var json = false

    func run() throws {
        let snapshot = StatsSnapshot.take()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(snapshot), as: UTF8.self))
        } else {
            print(snapshot.text, terminator: "")
        }
    }
}
