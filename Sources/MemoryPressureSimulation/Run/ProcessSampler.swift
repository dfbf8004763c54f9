import MemoryPressure
import Synchronization

/// With ``SimulationOptions/processes``: samples each app's child process (``MemorySystem/process(of:)``)
/// as the footprint is recorded, keeping each app's peak, its pids and how it was frozen, and
/// returns the children's footprint for the timeline (the tool's own resident bytes do not count them).
final class ProcessSampler: Sendable {
    private struct Entry {
        var peakBytes = 0
        var pids: [Int32] = []
        var freezeMechanism: FreezeMechanism?
        var samples = 0
        var frozenSamples = 0
    }

    private let system: MemorySystem
    private let apps: [AppIdentifier]
    private let entries: Mutex<[AppIdentifier: Entry]>

    /// A sampler of `apps`' processes in `system`.
    init(system: MemorySystem, apps: [AppIdentifier]) {
        self.system = system
        self.apps = apps
        entries = Mutex(Dictionary(uniqueKeysWithValues: apps.map { ($0, Entry()) }))
    }

    /// Samples every app's process now; returns their footprints' sum.
    func sample() -> Int {
        let statuses = apps.map { ($0, system.process(of: $0)) }
        return entries.withLock { entries in
            var total = 0
            for case let (app, status?) in statuses {
                total += status.footprintBytes
                var entry = entries[app] ?? Entry()
                entry.peakBytes = max(entry.peakBytes, status.footprintBytes)
                if entry.pids.last != status.pid { entry.pids.append(status.pid) }
                entry.freezeMechanism = status.freezeMechanism
                entry.samples += 1
                if status.isFrozen { entry.frozenSamples += 1 }
                entries[app] = entry
            }
            return total
        }
    }

    /// What the samples showed, one entry per app in the scenario's order.
    var report: [SimulationReport.ProcessPeak] {
        entries.withLock { entries in
            apps.map { app in
                let entry = entries[app] ?? Entry()
                return SimulationReport.ProcessPeak(
                    app: app.rawValue, peakFootprintBytes: entry.peakBytes, pids: entry.pids,
                    freezeMechanism: entry.freezeMechanism?.description, samples: entry.samples, frozenSamples: entry.frozenSamples
                )
            }
        }
    }
}
