import MemoryPressureSimulation

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The files a run writes: checked before it starts (so bad paths are bad input, with nothing
/// written), and each written whole (to a temporary file renamed into place) after it ends.
struct OutputFiles {
    let report: String?
    let timeline: String?
    let chart: String?

    /// Checks that each path given can be written: not a directory, in an existing writable
    /// directory, and no two the same.
    init(report: String?, timeline: String?, chart: String?) throws(BadInput) {
        let given = [("--report", report), ("--timeline", timeline), ("--chart", chart)].compactMap { option, path in
            path.map { (option, $0) }
        }
        for (option, path) in given {
            try Self.check(path, option: option)
        }
        if let duplicate = Dictionary(grouping: given, by: \.1).first(where: { $0.value.count > 1 }) {
            throw BadInput("\(duplicate.value.map(\.0).joined(separator: " and ")) both name \(duplicate.key.debugDescription); expected a different file for each")
        }
        self.report = report
        self.timeline = timeline
        self.chart = chart
    }

    /// Writes the report as JSON, the timeline as CSV and the chart as SVG, where asked.
    func write(_ result: SimulationResult) throws {
        if let report {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try write(try encoder.encode(result.report) + Data("\n".utf8), to: report)
        }
        if let timeline {
            try write(Data(result.timeline.csv.utf8), to: timeline)
        }
        if let chart {
            try write(Data(TimelineChart(timeline: result.timeline).svg.utf8), to: chart)
        }
    }

    private func write(_ data: Data, to path: String) throws {
        try data.write(to: URL(filePath: path), options: .atomic)
    }

    private static func check(_ path: String, option: String) throws(BadInput) {
        guard !path.isEmpty else { throw BadInput("\(option) is empty; expected the path of a file to write") }
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw BadInput("\(option) \(path.debugDescription) is a directory; expected the path of a file to write")
        }
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        let parent = directory.isEmpty ? "/" : directory
        guard stat(parent, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw BadInput("\(option) \(path.debugDescription): directory \(parent.debugDescription) does not exist; expected a file in an existing directory")
        }
        guard access(parent, W_OK) == 0 else {
            throw BadInput("\(option) \(path.debugDescription): directory \(parent.debugDescription) is not writable; expected a file in a writable directory")
        }
    }
}
