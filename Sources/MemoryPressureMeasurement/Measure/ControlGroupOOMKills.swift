/// Counts the processes the OOM killer ended in a cgroup, from successive readings of its
/// cumulative `oom_kill` counter (`memory.events`). The first reading is the baseline: kills before
/// it are not counted. A reading below the last (a counter that restarted) is a new baseline.
package struct OOMKillCounter: Hashable, Sendable {
    /// The last reading.
    package private(set) var lastReading: Int?

    /// A counter that has no reading yet.
    package init() {}

    /// Takes a reading of the counter; returns how many kills it adds (0 for the baseline).
    package mutating func record(_ reading: Int) -> Int {
        defer { lastReading = reading }
        guard let lastReading, reading > lastReading else { return 0 }
        return reading - lastReading
    }
}
