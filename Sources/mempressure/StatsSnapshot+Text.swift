import MemoryPressure

extension StatsSnapshot {
    /// The snapshot as labelled lines in human units.
    var text: String {
        var lines: [String] = []
        func section(_ title: String) { lines.append(lines.isEmpty ? title : "\n" + title) }
        func row(_ label: String, _ value: String) {
            lines.append("  " + label.padding(to: 22) + value)
        }
        func bytes(_ count: Int?) -> String {
            guard let count else { return "unknown" }
            return "\(ByteCount(count)) (\(count) bytes)"
        }

        if let statistics = jemallocStatistics {
            section(["jemalloc", jemallocConfiguration?.version].compactMap { $0 }.joined(separator: " "))
            row("allocated", bytes(statistics.allocated))
            row("active", bytes(statistics.active))
            row("resident", bytes(statistics.resident))
            row("mapped", bytes(statistics.mapped))
            row("retained", bytes(statistics.retained))
            row("metadata", bytes(statistics.metadata))
        }
        if let configuration = jemallocConfiguration {
            section("jemalloc configuration")
            row("statistics", configuration.statisticsEnabled ? "enabled" : "disabled")
            row("arenas", "\(configuration.arenaCount) (\(configuration.automaticArenaCount) automatic)")
            row("dirty decay", Self.decay(configuration.dirtyDecayMilliseconds))
            row("muzzy decay", Self.decay(configuration.muzzyDecayMilliseconds))
            row("background thread", configuration.backgroundThread ? "on" : "off")
            row("thread cache", configuration.threadCache ? "on" : "off")
            row("page size", bytes(configuration.pageSize))
            row("oversize threshold", bytes(configuration.oversizeThreshold))
        }
        if let process {
            section("process (/proc/self/statm)")
            row("resident", bytes(process.residentBytes))
            row("virtual", bytes(process.virtualBytes))
            row("shared", bytes(process.sharedBytes))
        }
        if let cgroup {
            section("cgroup v2 \(cgroup.directory)")
            row("memory.current", bytes(cgroup.currentBytes))
            row("memory.max", Self.limit(bytes: cgroup.maxBytes, unlimited: cgroup.maxIsUnlimited, format: bytes))
            row("memory.high", Self.limit(bytes: cgroup.highBytes, unlimited: cgroup.highIsUnlimited, format: bytes))
        }
        if let pressure {
            section("memory pressure (\(pressureSource))")
            row("some avg10", "\(pressure.some.average10)%")
            row("full avg10", "\(pressure.full.average10)%")
        }
        if !unavailable.isEmpty {
            section("not available here")
            lines += unavailable.map { "  " + $0 }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func decay(_ milliseconds: Int) -> String {
        milliseconds < 0 ? "never" : "\(milliseconds) ms"
    }

    private static func limit(bytes: Int?, unlimited: Bool?, format: (Int?) -> String) -> String {
        switch unlimited {
        case .none: "unknown"
        case .some(true): "max (no limit)"
        case .some(false): format(bytes)
        }
    }
}

extension String {
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
