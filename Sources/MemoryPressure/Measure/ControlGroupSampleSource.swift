/// The process's cgroup v2: `memory.current` and `memory.events`.
public struct ControlGroupSampleSource: MemorySampleSource {
    private let group: Result<ControlGroup, MeasurementError>

    /// The cgroup of the calling process, found from `/proc/self/cgroup`; when there is none,
    /// every read reports why.
    public init() {
        group = Result { () throws(MeasurementError) in try ControlGroup.current() }
    }

    /// The cgroup at a known directory.
    public init(group: ControlGroup) {
        self.group = .success(group)
    }

    public var name: String {
        switch group {
        case .success(let group): "cgroup \(group.directory)"
        case .failure: "cgroup v2"
        }
    }

    public var depth: SampleDepth { .full }

    public func read(into sample: inout MemorySample) throws {
        let group = try group.get()
        sample.cgroupCurrentBytes = try group.currentBytes()
        sample.cgroupEvents = try group.events()
    }
}
