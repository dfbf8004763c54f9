import MemoryPressureRuntime
/// The counters of a cgroup's `memory.events`: how often each limit was hit since the cgroup was made.
///
/// Codable as an object of counts: `low`, `high`, `max`, `oom` and `oomKill`.
public struct ControlGroupEvents: Hashable, Sendable, Codable {
    /// Times the cgroup was reclaimed from while under `memory.low`.
    public var low: Int
    /// Times the cgroup was throttled for exceeding `memory.high`.
    public var high: Int
    /// Times the cgroup reached `memory.max`.
    public var max: Int
    /// Times the cgroup ran out of memory.
    public var oom: Int
    /// Processes of the cgroup killed by the OOM killer.
    public var oomKill: Int

    /// Event counts as `memory.events` reports them.
    package init(low: Int = 0, high: Int = 0, max: Int = 0, oom: Int = 0, oomKill: Int = 0) {
        self.low = low
        self.high = high
        self.max = max
        self.oom = oom
        self.oomKill = oomKill
    }

    /// Parses the text of `memory.events`: lines of `name count`, without allocating. Names this
    /// type does not know (newer kernels add some) are skipped; the five it knows must all be present.
    package init?<Text: Collection<UInt8>>(parsing text: Text) {
        var events = ControlGroupEvents()
        var found: UInt8 = 0
        let wellFormed = KernelText.allLines(of: text) { line in
            var name: Text.SubSequence?
            var count: Int?
            let fieldsAccepted = KernelText.allFields(of: line) { field in
                if name == nil {
                    name = field
                    return true
                }
                guard count == nil else { return false }
                count = KernelText.unsigned(field).flatMap { Int(exactly: $0) }
                return count != nil
            }
            guard fieldsAccepted, let name, let count else { return false }
            if let counter = Counter(named: name) {
                events[counter] = count
                found |= 1 << counter.rawValue
            }
            return true
        }
        guard wellFormed, found == 1 << Counter.allCases.count - 1 else { return nil }
        self = events
    }

    /// The counters this type keeps, by their names in `memory.events`.
    private enum Counter: UInt8, CaseIterable {
        case low, high, max, oom, oomKill

        init?(named name: some Collection<UInt8>) {
            guard let counter = Self.allCases.first(where: { KernelText.matches(name, $0.fileName) }) else { return nil }
            self = counter
        }

        var fileName: StaticString {
            switch self {
            case .low: "low"
            case .high: "high"
            case .max: "max"
            case .oom: "oom"
            case .oomKill: "oom_kill"
            }
        }
    }

    private subscript(counter: Counter) -> Int {
        get {
            switch counter {
            case .low: low
            case .high: high
            case .max: max
            case .oom: oom
            case .oomKill: oomKill
            }
        }
        set {
            switch counter {
            case .low: low = newValue
            case .high: high = newValue
            case .max: max = newValue
            case .oom: oom = newValue
            case .oomKill: oomKill = newValue
            }
        }
    }
}

extension ControlGroup {
    /// `memory.events`: how often the cgroup hit each of its limits.
    package func events() throws(MemoryPressureError) -> ControlGroupEvents {
        try KernelFile.parseBytes(path("memory.events"), capacity: ControlGroupEvents.fileCapacity) { ControlGroupEvents(parsing: $0) }
    }
}

extension ControlGroupEvents {
    /// Reads the counters from `memory.events` kept open (the sampling path).
    package static func read(from file: OpenKernelFile) throws(MemoryPressureError) -> ControlGroupEvents {
        try file.parse(capacity: fileCapacity) { ControlGroupEvents(parsing: $0) }
    }

    /// Today's six or so lines, with room for more.
    static let fileCapacity = 1024
}
