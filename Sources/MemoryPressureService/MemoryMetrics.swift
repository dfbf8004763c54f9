import MemoryPressure
import Metrics
import Synchronization

/// Records a ``MemorySystem``'s figures with swift-metrics, for any backend (Prometheus,
/// OpenTelemetry), from the moment it is made until ``stop()``.
///
/// | metric (with the default prefix)            | kind    | from                                     |
/// |---------------------------------------------|---------|------------------------------------------|
/// | `memory_pressure_footprint_bytes`           | gauge   | every sample                             |
/// | `memory_pressure_level`                     | gauge   | every sample: 0 normal, 1 warning, 2 critical |
/// | `memory_pressure_budget_bytes`              | gauge   | the budget in force: the configuration, then each change with the cgroup's limit |
/// | `memory_pressure_target_bytes`              | gauge   | the footprint the ladder works down to, likewise |
/// | `memory_pressure_app_footprint_bytes{app}`  | gauge   | the largest apps, every app interval      |
/// | `memory_pressure_other_apps_footprint_bytes`| gauge   | the other apps, summed                   |
/// | `memory_pressure_warnings_total{step}`      | counter | each memory-warning fan-out (`warning`, `softLimit`) |
/// | `memory_pressure_purged_bytes_total{step}`  | counter | bytes purged (`enteringBackground`, `purge`) |
/// | `memory_pressure_terminations_total{reason}`| counter | each termination                         |
/// | `memory_pressure_refused_allocations_total` | counter | each app-heap allocation refused         |
/// | `memory_pressure_oom_kills_total`           | counter | processes the OOM killer ended in the cgroup (`memory.events`) |
/// | `memory_pressure_unrecoverable_total`       | counter | each give-up: over the budget with nothing left to reclaim |
/// | `memory_pressure_purge_latency_seconds`     | timer   | crossing the warning threshold to under target |
/// | `memory_pressure_sample_duration_seconds`   | timer   | how long the monitor took to read each sample |
///
/// It observes the system's and its monitor's events synchronously (``MemorySystem/events``,
/// ``PressureMonitor/events``): it misses no event, needs no task, and adds a few metric updates to
/// each sample and event.
public final class MemoryMetrics: Sendable {
    /// The system recorded.
    public let system: MemorySystem
    /// What is recorded, and where.
    public let configuration: Configuration

    private let footprint: Gauge
    private let level: Gauge
    private let budget: Gauge
    private let target: Gauge
    private let apps: AppFootprintGauges
    private let warnings: CounterFamily<ReclamationStep>
    private let purgedBytes: CounterFamily<ReclamationStep>
    private let terminations: CounterFamily<TerminationReason>
    private let refusedAllocations: Counter
    private let oomKills: Counter
    private let unrecoverable: Counter
    /// The monitor's OOM kill count already added to ``oomKills``.
    private let recordedOOMKills = Atomic<Int>(0)
    private let purgeLatency: Timer
    private let sampleDuration: Timer
    private let observations: Mutex<[ObservationToken]>

    /// Starts recording `system`'s figures as `configuration` says.
    public init(system: MemorySystem, configuration: Configuration = .standard) {
        self.system = system
        self.configuration = configuration
        let factory = configuration.factory ?? MetricsSystem.factory
        let label = configuration.label
        footprint = Gauge(label: label("footprint_bytes"), factory: factory)
        level = Gauge(label: label("level"), factory: factory)
        apps = AppFootprintGauges(
            label: label("app_footprint_bytes"), othersLabel: label("other_apps_footprint_bytes"),
            maximumLabels: configuration.maximumAppLabels, interval: configuration.appFootprintInterval,
            factory: factory
        )
        warnings = CounterFamily(
            label: label("warnings_total"), dimension: "step", keys: [.warning, .softLimit],
            value: \.rawValue, factory: factory
        )
        purgedBytes = CounterFamily(
            label: label("purged_bytes_total"), dimension: "step", keys: [.enteringBackground, .purge],
            value: \.rawValue, factory: factory
        )
        terminations = CounterFamily(
            label: label("terminations_total"), dimension: "reason", keys: TerminationReason.allCases,
            value: \.rawValue, factory: factory
        )
        refusedAllocations = Counter(label: label("refused_allocations_total"), factory: factory)
        oomKills = Counter(label: label("oom_kills_total"), factory: factory)
        unrecoverable = Counter(label: label("unrecoverable_total"), factory: factory)
        purgeLatency = Timer(label: label("purge_latency_seconds"), factory: factory)
        sampleDuration = Timer(label: label("sample_duration_seconds"), factory: factory)
        budget = Gauge(label: label("budget_bytes"), factory: factory)
        target = Gauge(label: label("target_bytes"), factory: factory)
        budget.record(system.budget.totalBytes)
        target.record(system.targetBytes)
        level.record(system.monitor.level.rawValue)
        observations = Mutex([])
        let systemObservation = system.events.observe { [self] in record($0) }
        let monitorObservation = system.monitor.events.observe { [self] in record($0) }
        observations.withLock { $0 = [systemObservation, monitorObservation] }
    }

    /// Stops recording. The metrics keep their last values.
    public func stop() {
        for observation in observations.withLock({ $0 }) { observation.cancel() }
    }

    private func record(_ event: PressureEvent) {
        guard case .sample(let sample, let level) = event else { return }
        if let bytes = sample.footprintBytes { footprint.record(bytes) }
        self.level.record(level.rawValue)
        if let duration = sample.samplingDuration { sampleDuration.record(duration: duration) }
        let killed = system.monitor.oomKillCount
        let recorded = recordedOOMKills.exchange(killed, ordering: .relaxed)
        if killed > recorded { oomKills.increment(by: killed - recorded) }
        if apps.isDue(at: sample.time) {
            apps.update(with: system.appFootprints(), at: sample.time)
        }
    }

    private func record(_ event: MemorySystemEvent) {
        switch event {
        case .warning(_, let step):
            warnings.increment(step)
        case .purge(let report, let step):
            purgedBytes.increment(step, by: report.releasedBytes)
        case .termination(let record):
            terminations.increment(record.reason)
        case .ladderRun(let run):
            if let latency = run.latency { purgeLatency.record(duration: latency) }
        case .allocationRefused:
            refusedAllocations.increment()
        case .budgetChanged(let change):
            budget.record(change.budget.totalBytes)
            target.record(system.targetBytes)
        case .unrecoverable:
            unrecoverable.increment()
        }
    }
}

extension MemorySystem {
    /// The footprint of every hosted app and of every other owner of registered caches and heaps
    /// (a service's own caches).
    func appFootprints() -> [(app: AppIdentifier, bytes: Int)] {
        registry.owners.union(apps.map(\.identifier)).map { ($0, footprint(of: $0).totalBytes) }
    }
}
