/// The process's resident bytes from `/proc/self/statm`: the cheap figure read on every sample.
public struct ProcessMemorySampleSource: MemorySampleSource {
    public init() {}

    public var name: String { ProcessMemory.statmPath.string }

    public var depth: SampleDepth { .cheap }

    public func read(into sample: inout MemorySample) throws {
        sample.residentBytes = try ProcessMemory.current().residentBytes
    }
}
