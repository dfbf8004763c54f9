import SystemPackage
import MemoryPressureRuntime

/// Pressure stall information for memory: how much of the time tasks waited for memory.
///
/// Read from `/proc/pressure/memory`, or from a cgroup's `memory.pressure` for that cgroup alone.
///
/// Codable as an object with `some` and `full`, each ``Figures``.
public struct PressureStall: Hashable, Sendable, Codable {
    /// Stall figures over three windows and in total.
    ///
    /// Codable as an object: `average10Percent`, `average60Percent`, `average300Percent` and
    /// `totalMicroseconds`.
    public struct Figures: Hashable, Sendable, Codable {
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

        private enum CodingKeys: String, CodingKey {
            case average10 = "average10Percent"
            case average60 = "average60Percent"
            case average300 = "average300Percent"
            case totalMicroseconds
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
    ///
    /// SPI, not API: the monitor reads PSI itself and puts it in `MemorySample.pressureStall`. The
    /// Sampling suite reads the file directly, to price reading it afresh against the monitor's
    /// descriptor kept open.
    @_spi(Benchmarks) public static let systemPath: FilePath = "/proc/pressure/memory"

    /// Reads the figures from `path`.
    ///
    /// SPI for the same reason as `systemPath`.
    @_spi(Benchmarks) public static func read(from path: FilePath = systemPath) throws(MemoryPressureError) -> PressureStall {
        try KernelFile.parseBytes(path, capacity: fileCapacity, parse(_:))
    }

    /// Reads the figures from a PSI file kept open (the sampling path).
    package static func read(from file: OpenKernelFile) throws(MemoryPressureError) -> PressureStall {
        try file.parse(capacity: fileCapacity, parse(_:))
    }

    /// Two lines of four figures with room to spare.
    private static let fileCapacity = 512

    /// Parses a PSI file's text: a `some` line and a `full` line, each
    /// `avg10=… avg60=… avg300=… total=…`, without allocating.
    package static func parse(_ text: some Collection<UInt8>) -> PressureStall? {
        var some: Figures?
        var full: Figures?
        let wellFormed = KernelText.allLines(of: text) { line in
            var isSome: Bool?
            var figures = PartialFigures()
            let fieldsAccepted = KernelText.allFields(of: line) { field in
                guard isSome != nil else {
                    isSome = KernelText.matches(field, "some") ? true : KernelText.matches(field, "full") ? false : nil
                    return isSome != nil
                }
                return figures.take(field)
            }
            guard fieldsAccepted, let isSome, let complete = figures.complete else { return false }
            if isSome { some = complete } else { full = complete }
            return true
        }
        guard wellFormed, let some, let full else { return nil }
        return PressureStall(some: some, full: full)
    }

    /// The figures of one line as its fields are read.
    private struct PartialFigures {
        var average10: Double?
        var average60: Double?
        var average300: Double?
        var total: UInt64?

        /// Takes one `name=value` field; names it does not know are skipped. False when the field is
        /// malformed or an average is outside 0...100.
        mutating func take<Field: Collection<UInt8>>(_ field: Field) -> Bool {
            guard let (name, value) = KernelText.nameAndValue(field) else { return false }
            if KernelText.matches(name, "total") {
                total = KernelText.unsigned(value)
                return total != nil
            }
            let percentage = KernelText.decimal(value).flatMap { (0...100).contains($0) ? $0 : nil }
            if KernelText.matches(name, "avg10") {
                average10 = percentage
            } else if KernelText.matches(name, "avg60") {
                average60 = percentage
            } else if KernelText.matches(name, "avg300") {
                average300 = percentage
            } else {
                return true
            }
            return percentage != nil
        }

        var complete: Figures? {
            guard let average10, let average60, let average300, let total else { return nil }
            return Figures(average10: average10, average60: average60, average300: average300, totalMicroseconds: total)
        }
    }
}
