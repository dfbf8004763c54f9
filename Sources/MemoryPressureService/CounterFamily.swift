import Metrics
import Synchronization

/// Counters of one label, one per value of a dimension drawn from a small set of keys (reasons,
/// steps). The expected keys' counters are made at once, so they report zero before they first
/// count; any other key gets its counter when it first counts.
final class CounterFamily<Key: Hashable & Sendable>: Sendable {
    private let label: String
    private let dimension: String
    private let value: @Sendable (Key) -> String
    private let factory: any MetricsFactory
    private let counters: Mutex<[Key: Counter]>

    init(
        label: String, dimension: String, keys: [Key], value: @escaping @Sendable (Key) -> String,
        factory: any MetricsFactory
    ) {
        self.label = label
        self.dimension = dimension
        self.value = value
        self.factory = factory
        counters = Mutex([:])
        for key in keys { _ = counter(for: key) }
    }

    /// Adds `amount` (when positive) to `key`'s counter.
    func increment(_ key: Key, by amount: Int = 1) {
        guard amount > 0 else { return }
        counter(for: key).increment(by: amount)
    }

    private func counter(for key: Key) -> Counter {
        counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: label, dimensions: [(dimension, value(key))], factory: factory)
            counters[key] = counter
            return counter
        }
    }
}
