import MemoryPressure
import Synchronization

/// A sample source whose figures a test sets: the footprint and the memory stall a monitor reads
/// next. Give it to a monitor as its only source to drive pressure without allocating:
///
/// ```swift
/// let source = ScriptedSampleSource(residentBytes: 10 << 20)
/// var configuration = PressureMonitor.Configuration(budget: try MemoryBudget(totalBytes: 100 << 20))
/// configuration.sources = [source]
/// source.set(residentBytes: 90 << 20)   // the next sample is at warning
/// ```
public final class ScriptedSampleSource: MemorySampleSource {
    private let figures = Mutex<(resident: Int, stall: (some: Double, full: Double)?)>((0, nil))

    /// A source that reports `residentBytes` and no stall.
    public init(residentBytes: Int) {
        figures.withLock { $0.resident = residentBytes }
    }

    /// `scripted`.
    public var name: String { "scripted" }
    /// Read on every sample.
    public var depth: SampleDepth { .cheap }

    /// Sets what the next samples report: the resident bytes (unchanged when nil) and the 10-second
    /// `some` and `full` stall percentages (none when nil).
    public func set(residentBytes: Int? = nil, stall: (some: Double, full: Double)?) {
        figures.withLock { figures in
            if let residentBytes { figures.resident = residentBytes }
            figures.stall = stall
        }
    }

    /// Sets the sample's resident bytes and stall to the scripted figures.
    public func read(into sample: inout MemorySample) throws {
        let (resident, stall) = figures.withLock { $0 }
        sample.residentBytes = resident
        sample.pressureStall = stall.map {
            PressureStall(
                some: .init(average10: $0.some, average60: 0, average300: 0, totalMicroseconds: 0),
                full: .init(average10: $0.full, average60: 0, average300: 0, totalMicroseconds: 0)
            )
        }
    }
}
