@testable import mempressure
import MemoryPressure
@testable import MemoryPressureSimulation
import Testing

private let mebibyte = 1 << 20

struct TimelineTests {
    let timeline = Timeline(
        scenario: "test<&>", seed: 7, manager: true, budgetBytes: 100 * mebibyte, warningBytes: 80 * mebibyte,
        criticalBytes: 95 * mebibyte, targetBytes: 70 * mebibyte, durationSeconds: 4,
        samples: [
            .init(seconds: 0, footprintBytes: 50 * mebibyte, level: .normal, foreground: "maps"),
            .init(seconds: 1, footprintBytes: 110 * mebibyte, level: .critical, foreground: "maps"),
            .init(seconds: 1.5, footprintBytes: 120 * mebibyte, level: .critical, foreground: "a,b"),
            .init(seconds: 2, footprintBytes: 60 * mebibyte, level: .warning, foreground: nil),
            .init(seconds: 4, footprintBytes: 60 * mebibyte, level: .normal, foreground: nil),
        ],
        marks: [
            .init(seconds: 1, kind: .warning, label: "critical warning", bytes: 0),
            .init(seconds: 1.2, kind: .purge, label: "purge", bytes: 5 * mebibyte),
            .init(seconds: 1.8, kind: .termination, label: "photos", bytes: 50 * mebibyte),
        ]
    )

    @Test func thePeakAndTheTimeOverBudgetComeFromTheRecordings() {
        #expect(timeline.peakFootprintBytes == 120 * mebibyte)
        #expect(timeline.timeOverBudgetSeconds == 1.0)
    }

    @Test func theCSVHasAHeaderAndOneLinePerRecordingWithRunningCounts() {
        let lines = timeline.csv.split(separator: "\n")
        #expect(lines.first == "seconds,footprint_bytes,budget_bytes,level,foreground,warnings,purges,terminations")
        #expect(lines.count == 6)
        #expect(lines[1] == "0.000,52428800,104857600,normal,maps,0,0,0")
        #expect(lines[3] == "1.500,125829120,104857600,critical,\"a,b\",1,1,0")
        #expect(lines[4] == "2.000,62914560,104857600,warning,,1,1,1")
    }

    @Test func theChartDrawsEveryPartAndTheLegend() {
        let svg = TimelineChart(timeline: timeline).svg
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.hasSuffix("</svg>\n"))
        #expect(svg.contains("scenario test&lt;&amp;&gt;, seed 7, manager on"))
        #expect(svg.contains("peak 120 MiB (120.0% of the 100 MiB budget), 1.00 s over budget (25.0% of 4.0 s), 1 terminations"))
        for label in ["budget 100 MiB", "critical 95 MiB", "warning 80 MiB", "target 70 MiB", "Legend", "footprint (RSS)", "at critical level", "memory warning", "termination (app)"] {
            #expect(svg.contains(">\(label)</text>"), "missing \(label)")
        }
        #expect(svg.contains("<polyline"))
        #expect(svg.contains("fill=\"#ffdce0\""), "critical shading")
        #expect(svg.contains("fill=\"#fff5d6\""), "warning shading")
        #expect(svg.contains("<title>photos terminated at 1.8 s, 50 MiB returned</title>"))
        #expect(svg.contains("<title>purge of 5 MiB at 1.2 s</title>"))
        #expect(svg.contains("<title>critical warning at 1.0 s</title>"))
    }
}
