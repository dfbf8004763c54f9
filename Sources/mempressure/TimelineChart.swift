import MemoryPressure
import MemoryPressureSimulation

/// Draws a ``Timeline`` as an SVG chart that reads on its own: the footprint against time, the
/// budget and the warning, critical and target lines, the periods at the warning and critical
/// levels shaded, memory warnings, purges and terminations marked, a title with the key figures and
/// a legend.
struct TimelineChart: Sendable {
    /// The timeline drawn.
    let timeline: Timeline

    private let width = 1000.0
    private let height = 540.0
    private let left = 80.0
    private let right = 800.0
    private let top = 70.0
    private let bottom = 480.0
    private let mebibyte = Double(1 << 20)

    private enum Palette {
        static let footprint = "#1f6feb"
        static let budget = "#8b0000"
        static let critical = "#d73a49"
        static let warning = "#e36209"
        static let target = "#22863a"
        static let warningShade = "#fff5d6"
        static let criticalShade = "#ffdce0"
        static let purge = "#6f42c1"
        static let grid = "#e1e4e8"
        static let text = "#24292e"
    }

    /// The SVG document.
    var svg: String {
        var parts: [String] = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
                + "viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">",
            "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
        ]
        parts += title() + levelShading() + grid() + thresholds() + footprint() + marks() + axes() + legend()
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }

    // MARK: Scales

    private var duration: Double { max(timeline.durationSeconds, timeline.samples.last?.seconds ?? 0, 0.001) }

    private var maximumMebibytes: Double {
        let largest = Double(max(timeline.peakFootprintBytes, timeline.budgetBytes)) * 1.08 / mebibyte
        let step = Self.niceStep(largest / 6)
        return (largest / step).rounded(.up) * step
    }

    private func x(_ seconds: Double) -> Double {
        left + (right - left) * min(max(seconds / duration, 0), 1)
    }

    private func y(_ bytes: Int) -> Double {
        bottom - (bottom - top) * min(Double(bytes) / mebibyte / maximumMebibytes, 1)
    }

    /// 1, 2 or 5 times a power of ten, at least `rough`.
    private static func niceStep(_ rough: Double) -> Double {
        guard rough > 0 else { return 1 }
        var power = 1.0
        while power * 10 <= rough { power *= 10 }
        while power > rough { power /= 10 }
        for multiple in [1.0, 2, 5, 10] where power * multiple >= rough { return power * multiple }
        return power * 10
    }

    private func number(_ value: Double) -> String {
        DecimalText.format(value, places: 1)
    }

    // MARK: Layers

    private func title() -> [String] {
        let peak = timeline.peakFootprintBytes
        let over = timeline.timeOverBudgetSeconds
        let percent = Double(peak) / Double(max(timeline.budgetBytes, 1)) * 100
        let terminations = timeline.marks.filter { $0.kind == .termination }.count
        let heading = "mempressure: scenario \(timeline.scenario), seed \(timeline.seed), manager \(timeline.manager ? "on" : "off")"
        let figures = "peak \(ByteCount(peak)) (\(number(percent))% of the \(ByteCount(timeline.budgetBytes)) budget), "
            + "\(DecimalText.format(over, places: 2)) s over budget (\(number(over / duration * 100))% of \(number(duration)) s), "
            + "\(terminations) terminations"
        return [
            text(heading, x: left, y: 28, size: 16, weight: "bold"),
            text(figures, x: left, y: 50, size: 13),
        ]
    }

    private func levelShading() -> [String] {
        var rects: [String] = []
        var runStart: (seconds: Double, level: PressureLevel)?
        for sample in timeline.samples.map({ (seconds: $0.seconds, level: $0.level) }) + [(seconds: duration, level: .normal)] {
            if let current = runStart, current.level != sample.level {
                if current.level != .normal {
                    let color = current.level == .critical ? Palette.criticalShade : Palette.warningShade
                    rects.append(rect(x: x(current.seconds), y: top, width: x(sample.seconds) - x(current.seconds), height: bottom - top, fill: color))
                }
                runStart = nil
            }
            if runStart == nil { runStart = (sample.seconds, sample.level) }
        }
        return rects
    }

    private func grid() -> [String] {
        var lines: [String] = []
        let yStep = Self.niceStep(maximumMebibytes / 6)
        for mebibytes in stride(from: 0, through: maximumMebibytes, by: yStep) {
            let position = y(Int(mebibytes * mebibyte))
            lines.append(line(x1: left, y1: position, x2: right, y2: position, stroke: Palette.grid))
            lines.append(text("\(Int(mebibytes))", x: left - 8, y: position + 4, anchor: "end"))
        }
        let xStep = Self.niceStep(duration / 10)
        for seconds in stride(from: 0, through: duration, by: xStep) {
            let position = x(seconds)
            lines.append(line(x1: position, y1: top, x2: position, y2: bottom, stroke: Palette.grid))
            lines.append(text(xStep < 1 ? number(seconds) : "\(Int(seconds.rounded()))", x: position, y: bottom + 18, anchor: "middle"))
        }
        return lines
    }

    /// The budget and the thresholds, labelled above their lines (the budget and warning) or below
    /// them (critical and target), so labels of close lines do not overlap.
    private func thresholds() -> [String] {
        [
            (timeline.budgetBytes, Palette.budget, "", "budget", -4.0),
            (timeline.criticalBytes, Palette.critical, "6,4", "critical", 12),
            (timeline.warningBytes, Palette.warning, "6,4", "warning", -4),
            (timeline.targetBytes, Palette.target, "2,4", "target", 12),
        ].flatMap { bytes, color, dash, name, labelOffset in
            let position = y(bytes)
            return [
                line(x1: left, y1: position, x2: right, y2: position, stroke: color, width: name == "budget" ? 2 : 1.5, dash: dash),
                text("\(name) \(ByteCount(bytes))", x: right - 4, y: position + labelOffset, anchor: "end", fill: color, size: 11),
            ]
        }
    }

    /// The footprint as a line, keeping each pixel column's lowest and highest recording so no peak
    /// is lost however many recordings there are.
    private func footprint() -> [String] {
        var points: [(Double, Double)] = []
        var column: (index: Int, low: (Double, Double), high: (Double, Double))?
        func flush() {
            guard let column else { return }
            let ordered = column.low.0 <= column.high.0 ? [column.low, column.high] : [column.high, column.low]
            points += ordered[0] == ordered[1] ? [ordered[0]] : ordered
        }
        for sample in timeline.samples {
            let point = (x(sample.seconds), y(sample.footprintBytes))
            let index = Int(point.0)
            if let current = column, current.index == index {
                if point.1 > current.low.1 { column?.low = point }
                if point.1 < current.high.1 { column?.high = point }
            } else {
                flush()
                column = (index, point, point)
            }
        }
        flush()
        let list = points.map { "\(number($0.0)),\(number($0.1))" }.joined(separator: " ")
        return ["<polyline fill=\"none\" stroke=\"\(Palette.footprint)\" stroke-width=\"1.6\" stroke-linejoin=\"round\" points=\"\(list)\"/>"]
    }

    private func marks() -> [String] {
        timeline.marks.flatMap { mark -> [String] in
            let position = x(mark.seconds)
            switch mark.kind {
            case .warning:
                return ["<path d=\"M \(number(position - 5)) \(number(top - 12)) L \(number(position + 5)) \(number(top - 12)) L \(number(position)) \(number(top - 3)) Z\" fill=\"\(Palette.warning)\"><title>\(escape(mark.label)) at \(number(mark.seconds)) s</title></path>"]
            case .purge:
                return ["<circle cx=\"\(number(position))\" cy=\"\(number(bottom + 30))\" r=\"3\" fill=\"\(Palette.purge)\"><title>purge of \(ByteCount(mark.bytes)) at \(number(mark.seconds)) s</title></circle>"]
            case .termination:
                let height = footprintBytes(at: mark.seconds)
                let center = y(height)
                return [
                    "<path d=\"M \(number(position - 5)) \(number(center - 5)) L \(number(position + 5)) \(number(center + 5)) M \(number(position - 5)) \(number(center + 5)) L \(number(position + 5)) \(number(center - 5))\" stroke=\"\(Palette.critical)\" stroke-width=\"2.5\"><title>\(escape(mark.label)) terminated at \(number(mark.seconds)) s, \(ByteCount(mark.bytes)) returned</title></path>",
                    text(mark.label, x: position + 6, y: center - 7, fill: Palette.critical, size: 10),
                ]
            }
        }
    }

    /// The footprint recorded last at or before `seconds`.
    private func footprintBytes(at seconds: Double) -> Int {
        timeline.samples.last { $0.seconds <= seconds }?.footprintBytes ?? timeline.samples.first?.footprintBytes ?? 0
    }

    private func axes() -> [String] {
        [
            line(x1: left, y1: bottom, x2: right, y2: bottom, stroke: Palette.text),
            line(x1: left, y1: top, x2: left, y2: bottom, stroke: Palette.text),
            text("seconds", x: (left + right) / 2, y: bottom + 50, anchor: "middle"),
            "<text x=\"20\" y=\"\(number((top + bottom) / 2))\" text-anchor=\"middle\" fill=\"\(Palette.text)\" transform=\"rotate(-90 20 \(number((top + bottom) / 2)))\">footprint (MiB)</text>",
            text("warnings ▼ above the plot, purges ● below it", x: right, y: bottom + 50, anchor: "end", size: 10),
        ]
    }

    private func legend() -> [String] {
        let x0 = right + 24
        var row = top
        var parts = [text("Legend", x: x0, y: row, weight: "bold")]
        func entry(_ symbol: String, _ label: String) {
            row += 22
            parts.append(symbol)
            parts.append(text(label, x: x0 + 30, y: row + 4))
        }
        entry(line(x1: x0, y1: row + 22, x2: x0 + 22, y2: row + 22, stroke: Palette.footprint, width: 2), "footprint (RSS)")
        entry(line(x1: x0, y1: row + 22, x2: x0 + 22, y2: row + 22, stroke: Palette.budget, width: 2), "budget")
        entry(line(x1: x0, y1: row + 22, x2: x0 + 22, y2: row + 22, stroke: Palette.critical, width: 1.5, dash: "6,4"), "critical threshold")
        entry(line(x1: x0, y1: row + 22, x2: x0 + 22, y2: row + 22, stroke: Palette.warning, width: 1.5, dash: "6,4"), "warning threshold")
        entry(line(x1: x0, y1: row + 22, x2: x0 + 22, y2: row + 22, stroke: Palette.target, width: 1.5, dash: "2,4"), "reclamation target")
        entry(rect(x: x0, y: row + 16, width: 22, height: 12, fill: Palette.warningShade), "at warning level")
        entry(rect(x: x0, y: row + 16, width: 22, height: 12, fill: Palette.criticalShade), "at critical level")
        entry("<path d=\"M \(number(x0 + 6)) \(number(row + 17)) L \(number(x0 + 16)) \(number(row + 17)) L \(number(x0 + 11)) \(number(row + 26)) Z\" fill=\"\(Palette.warning)\"/>", "memory warning")
        entry("<circle cx=\"\(number(x0 + 11))\" cy=\"\(number(row + 22))\" r=\"3\" fill=\"\(Palette.purge)\"/>", "purge")
        entry("<path d=\"M \(number(x0 + 6)) \(number(row + 17)) L \(number(x0 + 16)) \(number(row + 27)) M \(number(x0 + 6)) \(number(row + 27)) L \(number(x0 + 16)) \(number(row + 17))\" stroke=\"\(Palette.critical)\" stroke-width=\"2.5\"/>", "termination (app)")
        return parts
    }

    // MARK: Elements

    private func line(x1: Double, y1: Double, x2: Double, y2: Double, stroke: String, width: Double = 1, dash: String = "") -> String {
        "<line x1=\"\(number(x1))\" y1=\"\(number(y1))\" x2=\"\(number(x2))\" y2=\"\(number(y2))\" stroke=\"\(stroke)\" stroke-width=\"\(number(width))\""
            + (dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\"") + "/>"
    }

    private func rect(x: Double, y: Double, width: Double, height: Double, fill: String) -> String {
        "<rect x=\"\(number(x))\" y=\"\(number(y))\" width=\"\(number(max(width, 0)))\" height=\"\(number(height))\" fill=\"\(fill)\"/>"
    }

    private func text(
        _ content: String, x: Double, y: Double, anchor: String = "start", fill: String = Palette.text,
        size: Int = 12, weight: String = "normal"
    ) -> String {
        "<text x=\"\(number(x))\" y=\"\(number(y))\" text-anchor=\"\(anchor)\" fill=\"\(fill)\" font-size=\"\(size)\" font-weight=\"\(weight)\">\(escape(content))</text>"
    }

    private func escape(_ content: String) -> String {
        content.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
    }
}
