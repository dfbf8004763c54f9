import MemoryPressureSimulation

extension Timeline {
    /// The recordings as CSV, one line each after a header: seconds, footprint and budget in bytes,
    /// the level, the foreground app, and the system's actions so far (warnings, purges,
    /// terminations), so a spreadsheet can plot any of them against time.
    var csv: String {
        var lines = ["seconds,footprint_bytes,budget_bytes,level,foreground,warnings,purges,terminations"]
        lines.reserveCapacity(samples.count + 1)
        var counts: [Mark.Kind: Int] = [:]
        var pending = marks[...]
        for sample in samples {
            while let mark = pending.first, mark.seconds <= sample.seconds {
                counts[mark.kind, default: 0] += 1
                pending = pending.dropFirst()
            }
            let fields = [
                DecimalText.format(sample.seconds, places: 3), "\(sample.footprintBytes)", "\(budgetBytes)",
                sample.level.description, Self.field(sample.foreground ?? ""),
                "\(counts[.warning, default: 0])", "\(counts[.purge, default: 0])", "\(counts[.termination, default: 0])",
            ]
            lines.append(fields.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` as a CSV field: quoted when it holds a comma, a quote or a line break.
    private static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return text }
        return "\"" + text.replacing("\"", with: "\"\"") + "\""
    }
}
