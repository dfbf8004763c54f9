/// The process's cgroup v2: `memory.current` and, where the cgroup has it, `memory.events`, kept
/// open and re-read on each full sample.
package struct ControlGroupSampleSource: MemorySampleSource {
    /// Names the cgroup's directory in log lines.
    package let name: String
    private let files: Result<(current: OpenKernelFile, events: OpenKernelFile?), MemoryPressureError>

    /// The cgroup of the calling process, found from `/proc/self/cgroup`; when there is none, or it
    /// has no memory controller, every read reports why.
    package init() {
        do {
            self.init(group: try ControlGroup.current())
        } catch {
            self.init(name: "cgroup v2", files: .failure(error))
        }
    }

    /// The cgroup at a known directory.
    package init(group: ControlGroup) {
        self.init(name: "cgroup \(group.directory)", files: Result { () throws(MemoryPressureError) in
            let current = try OpenKernelFile(group.path("memory.current"))
            do throws(MemoryPressureError) {
                return (current, try OpenKernelFile(group.path("memory.events")))
            } catch {
                guard error.code == .measurementUnavailable else { throw error }
                return (current, nil)
            }
        })
    }

    private init(name: String, files: Result<(current: OpenKernelFile, events: OpenKernelFile?), MemoryPressureError>) {
        self.name = name
        self.files = files
    }

    package var depth: SampleDepth { .full }

    package func read(into sample: inout MemorySample) throws {
        let files = try files.get()
        sample.cgroupCurrentBytes = try ControlGroup.currentBytes(from: files.current)
        if let events = files.events {
            sample.cgroupEvents = try ControlGroupEvents.read(from: events)
        }
    }
}
