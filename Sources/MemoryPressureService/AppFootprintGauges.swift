import MemoryPressure
import Metrics
import Synchronization

/// The per-app footprint gauges, with bounded dimensions: the largest `maximumLabels` apps each
/// have a gauge labelled with their identifier; the rest are summed in one gauge of their own. An
/// app that drops out of the largest has its gauge destroyed, so the backend stops reporting it.
final class AppFootprintGauges: Sendable {
    private struct State {
        var labelled: [AppIdentifier: Gauge] = [:]
        var lastUpdate: ContinuousClock.Instant?
    }

    private let label: String
    private let others: Gauge
    private let maximumLabels: Int
    private let interval: Duration
    private let factory: any MetricsFactory
    private let state = Mutex(State())

    init(label: String, othersLabel: String, maximumLabels: Int, interval: Duration, factory: any MetricsFactory) {
        self.label = label
        self.others = Gauge(label: othersLabel, factory: factory)
        self.maximumLabels = maximumLabels
        self.interval = interval
        self.factory = factory
    }

    /// Whether the interval has passed since the last update at `time`.
    func isDue(at time: ContinuousClock.Instant) -> Bool {
        state.withLock { state in state.lastUpdate.map { time - $0 >= interval } ?? true }
    }

    /// Records `footprints`: the largest apps (ties by identifier) with some footprint each on its
    /// own gauge, the rest summed (`Int.max` when the sum is larger).
    func update(with footprints: [(app: AppIdentifier, bytes: Int)], at time: ContinuousClock.Instant) {
        let ranked = footprints.filter { $0.bytes > 0 }.sorted { $0.bytes != $1.bytes ? $0.bytes > $1.bytes : $0.app < $1.app }
        let largest = ranked.prefix(maximumLabels)
        // Clamped, as each footprint is: the declared costs of a few apps' caches can pass `Int.max`
        // together, and the sum trapped on the monitor's thread.
        let othersBytes = ranked.dropFirst(maximumLabels).reduce(0) { $0.addingClamped($1.bytes) }
        let dropped = state.withLock { state in
            state.lastUpdate = time
            var kept: [AppIdentifier: Gauge] = [:]
            for (app, bytes) in largest {
                let gauge = state.labelled.removeValue(forKey: app)
                    ?? Gauge(label: label, dimensions: [("app", app.rawValue)], factory: factory)
                gauge.record(bytes)
                kept[app] = gauge
            }
            defer { state.labelled = kept }
            return Array(state.labelled.values)
        }
        others.record(othersBytes)
        for gauge in dropped { gauge.destroy() }
    }
}
