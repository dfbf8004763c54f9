import SystemPackage

/// Pressure stall information for memory: how much of the time tasks waited for memory.
///
/// Read from `/proc/pressure/memory`, or from a cgroup's `memory.pressure` for that cgroup alone.
public struct PressureStall: Hashable, Sendable {
    /// Stall figures over three windows and in total.
    public struct Figures: Hashable, Sendable {
        /// Percentage of the last 10 seconds stalled.
        public var average10: Double
        /// Percentage of the last 60 seconds stalled.
        public var average60: Double
        /// Percentage of the last 300 seconds stalled.
        public var average300: Double
        /// Total stall time in microseconds since boot (or since the cgroup was made).
        public var totalMicroseconds: UInt64

        /// Figures as a PSI line reports them.
        public init(average10: Double, average60: Double, average300: Double, totalMicroseconds: UInt64) {
            self.average10 = average10
            self.average60 = average60
            self.average300 = average300
            self.totalMicroseconds = totalMicroseconds
        }
    }

    /// Time in which at least one task stalled on memory.
    public var some: Figures
    /// Time in which every non-idle task stalled on memory at once.
    public var full: Figures

    /// Stall information from its two lines.
    public init(some: Figures, full: Figures) {
        self.some = some
        self.full = full
    }

    /// The system-wide memory PSI file.
    public static let systemPath: FilePath = "/proc/pressure/memory"

    /// Reads the figures from `path`.
    public static func read(from path: FilePath = systemPath) throws(MeasurementError) -> PressureStall {
        try KernelFile.parse(path, parse(_:))
    }

    /// Parses a PSI file's text: a `some` line and a `full` line, each
    /// `avg10=… avg60=… avg300=… total=…`.
    static func parse(_ text: Substring) -> PressureStall? {
        var some: Figures?
        var full: Figures?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let kind = fields.first else { continue }
            let figures = parseFigures(fields.dropFirst())
            switch kind {
            case "some": some = figures
            case "full": full = figures
            default: return nil
            }
        }
        guard let some, let full else { return nil }
        return PressureStall(some: some, full: full)
    }

    private static func parseFigures(_ fields: ArraySlice<Substring>) -> Figures? {
        var values: [Substring: Substring] = [:]
        for field in fields {
            let pair = field.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            values[pair[0]] = pair[1]
        }
        guard let average10 = values["avg10"].flatMap({ Double($0) }),
              let average60 = values["avg60"].flatMap({ Double($0) }),
              let average300 = values["avg300"].flatMap({ Double($0) }),
              let total = values["total"].flatMap({ UInt64($0) }),
              [average10, average60, average300].allSatisfy({ (0...100).contains($0) })
        else { return nil }
        return Figures(average10: average10, average60: average60, average300: average300, totalMicroseconds: total)
    }
}
