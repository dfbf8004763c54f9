/// The process's resident bytes from `/proc/self/statm`: the cheap figure read on every sample,
/// through a descriptor kept open.
package struct ProcessMemorySampleSource: MemorySampleSource {
    private let statm: Result<OpenKernelFile, MemoryPressureError>

    /// Opens `/proc/self/statm`; when that fails, every read reports why.
    package init() {
        statm = Result { () throws(MemoryPressureError) in try OpenKernelFile(ProcessMemory.statmPath) }
    }

    package var name: String { ProcessMemory.statmPath.string }

    package var depth: SampleDepth { .cheap }

    package func read(into sample: inout MemorySample) throws {
        sample.residentBytes = try ProcessMemory.read(from: statm.get()).residentBytes
    }
}
