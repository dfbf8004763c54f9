import MemoryPressure

extension StatsSnapshot {
    /// The snapshot as labelled lines in human units.
    var text: String {
        var lines: [String] = []
        func section(_ title: String) { lines.append(lines.isEmpty ? title : "\n" + title) }
        func row(_ label: String, _ value: String) {
            lines.append("  " + label.padding(to: 28) + value)
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
            section("cgroup layout: \(cgroup.layout)")
            switch cgroup.layout {
            case "v2": row("memory controller", "cgroup v2")
            case "v1": row("memory controller", "cgroup v1, no cgroup2 mounted")
            case "hybrid": row("memory controller", "cgroup v1, beside a cgroup2 tree without it")
            default: row("memory controller", "none: " + (cgroup.reason ?? "unknown"))
            }
            if let unified = cgroup.unifiedDirectory {
                row("cgroup2 directory", unified)
            }
            if let v2 = cgroup.v2 {
                section("cgroup v2 \(v2.directory)")
                row("memory.current", bytes(v2.currentBytes))
                row("memory.max", Self.limit(bytes: v2.maxBytes, unlimited: v2.maxIsUnlimited, format: bytes))
                row("memory.high", Self.limit(bytes: v2.highBytes, unlimited: v2.highIsUnlimited, format: bytes))
            }
            if let v1 = cgroup.v1 {
                section("cgroup v1 \(v1.directory)")
                row("memory.usage_in_bytes", bytes(v1.usageBytes))
                row("memory.limit_in_bytes", Self.limit(bytes: v1.limitBytes, unlimited: v1.limitIsUnlimited, unlimitedText: "no limit (v1's largest value)", format: bytes))
                row("memory.soft_limit_in_bytes", Self.limit(bytes: v1.softLimitBytes, unlimited: v1.softLimitIsUnlimited, unlimitedText: "no limit (v1's largest value)", format: bytes))
                row("hierarchical_memory_limit", Self.limit(bytes: v1.hierarchicalLimitBytes, unlimited: v1.hierarchicalLimitIsUnlimited, unlimitedText: "no limit (v1's largest value)", format: bytes))
                row("total_inactive_file", bytes(v1.totalInactiveFileBytes))
                row("working set", bytes(v1.workingSetBytes))
            }
            section("effective limit")
            if let limit = cgroup.effectiveLimitBytes {
                row("limit", bytes(limit))
                row("source", cgroup.effectiveLimitSource ?? "unknown")
            } else {
                row("limit", "none on the path to the root")
            }
            row("automatic budget", bytes(cgroup.automaticBudgetBytes))
            row("budget source", cgroup.automaticBudgetSource)
            row("footprint judged", cgroup.judgedFootprint)
        }
        if !eventSources.isEmpty {
            section("event sources")
            for source in eventSources {
                row(source.name, source.state + (source.path.map { " on " + $0 } ?? "") + ": " + source.detail)
            }
            if let cgroup, let source = cgroup.oomKillSource {
                row("oom_kill", cgroup.oomKillCount.map { "\($0) (\(source))" } ?? "unknown (\(source))")
            }
        }
        if let pressure {
            section("memory pressure (\(pressureSource))")
            row("some avg10", "\(pressure.some.average10)%")
            row("full avg10", "\(pressure.full.average10)%")
        }
        if let compression {
            section("compression (zram)")
            row("devices", compression.devices.joined(separator: ", "))
            row("held", "\(bytes(compression.originalBytes)) in \(bytes(compression.memoryUsedBytes)) of memory")
            row("cost per byte", "\((compression.costRatio * 1000).rounded() / 1000)")
            row("this process in swap", "\(bytes(compression.processSwappedBytes)), counted at \(bytes(compression.processCompressedBytes))")
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

    private static func limit(bytes: Int?, unlimited: Bool?, unlimitedText: String = "max (no limit)", format: (Int?) -> String) -> String {
        switch unlimited {
        case .none: "unknown"
        case .some(true): unlimitedText
        case .some(false): format(bytes)
        }
    }
}

extension String {
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
