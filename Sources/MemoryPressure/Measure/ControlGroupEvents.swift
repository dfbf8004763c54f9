/// The counters of a cgroup's `memory.events`: how often each limit was hit since the cgroup was made.
public struct ControlGroupEvents: Hashable, Sendable {
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
    public init(low: Int = 0, high: Int = 0, max: Int = 0, oom: Int = 0, oomKill: Int = 0) {
        self.low = low
        self.high = high
        self.max = max
        self.oom = oom
        self.oomKill = oomKill
    }

    /// Parses the text of `memory.events`: lines of `name count`. Names this type does not know
    /// (newer kernels add some) are skipped; the five it knows must all be present.
    init?(parsing text: Substring) {
        var counts: [Substring: Int] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let count = Int(fields[1]), count >= 0 else { return nil }
            counts[fields[0]] = count
        }
        guard let low = counts["low"], let high = counts["high"], let max = counts["max"],
              let oom = counts["oom"], let oomKill = counts["oom_kill"]
        else { return nil }
        self.init(low: low, high: high, max: max, oom: oom, oomKill: oomKill)
    }
}

extension ControlGroup {
    /// `memory.events`: how often the cgroup hit each of its limits.
    public func events() throws(MeasurementError) -> ControlGroupEvents {
        try KernelFile.parse(path("memory.events"), ControlGroupEvents.init(parsing:))
    }
}
