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

    /// Writes the report as JSON, the timeline as CSV and the chart as SVG, where asked: each to a
    /// temporary file beside its target first, then all renamed into place, so that a failure
    /// leaves none of them written.
    func write(_ result: SimulationResult) throws {
        var contents: [(path: String, data: Data)] = []
        if let report {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            contents.append((report, try encoder.encode(result.report) + Data("\n".utf8)))
        }
        if let timeline {
            contents.append((timeline, Data(result.timeline.csv.utf8)))
        }
        if let chart {
            contents.append((chart, Data(TimelineChart(timeline: result.timeline).svg.utf8)))
        }
        var written: [(temporary: String, path: String)] = []
        do {
            for (path, data) in contents {
                let temporary = "\(path).\(getpid()).tmp"
                written.append((temporary, path))
                try data.write(to: URL(filePath: temporary))
            }
        } catch {
            for file in written { unlink(file.temporary) }
            throw error
        }
        for file in written where rename(file.temporary, file.path) != 0 {
            let reason = String(cString: strerror(errno))
            for left in written { unlink(left.temporary) }
            throw OutputError(description: "could not write \(file.path): \(reason)")
        }
    }

    /// A file that could not be put in place.
    struct OutputError: Error, CustomStringConvertible {
        let description: String
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
