import SystemPackage

/// Memory pressure stall information: the cgroup's own `memory.pressure` where it has one, else
/// the system's `/proc/pressure/memory`, kept open and re-read on each full sample.
package struct PressureStallSampleSource: MemorySampleSource {
    /// The PSI file read.
    package let path: FilePath
    private let file: Result<OpenKernelFile, MemoryPressureError>

    /// Reads the PSI file of the calling process's cgroup, or the system's when the cgroup's is not
    /// there.
    package init() {
        self.init(path: Self.preferredPath())
    }

    /// Reads the PSI file at `path`; when it cannot be opened, every read reports why.
    package init(path: FilePath) {
        self.path = path
        file = Result { () throws(MemoryPressureError) in try OpenKernelFile(path) }
    }

    package var name: String { path.string }

    package var depth: SampleDepth { .full }

    package func read(into sample: inout MemorySample) throws {
        sample.pressureStall = try PressureStall.read(from: file.get())
    }

    /// The cgroup's `memory.pressure` when it can be read, else `/proc/pressure/memory`.
    static func preferredPath() -> FilePath {
        if let group = try? ControlGroup.current(), (try? PressureStall.read(from: group.memoryPressurePath)) != nil {
            return group.memoryPressurePath
        }
        return PressureStall.systemPath
    }
}
