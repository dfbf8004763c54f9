import DequeModule

/// The purge latencies of the ladder runs that brought the footprint back under target: from the
/// sample that crossed the warning threshold to the measurement under target.
///
/// Encodable as a summary: `count`, and `p50Seconds`, `p99Seconds` and `maxSeconds`, left out when
/// no latency is recorded.
public struct PurgeLatencyStatistics: Hashable, Sendable, Encodable {
    /// Every latency recorded, in order (the most recent `capacity`): a ring, whose oldest latency
    /// is dropped in constant time once it is full.
    package private(set) var latencies: Deque<Duration> = []
    /// How many latencies are kept.
    static let capacity = 10_000

    /// No latencies yet.
    package init() {}

    /// Adds one latency, dropping the oldest beyond ``capacity``.
    mutating func record(_ latency: Duration) {
        if latencies.count == Self.capacity { latencies.removeFirst() }
        latencies.append(latency)
    }

    /// The number of latencies kept.
    public var count: Int { latencies.count }

    /// The latency at `fraction` of the sorted latencies (nearest rank).
    ///
    /// - Parameter fraction: 0 (the least) to 1 (the largest); 0.5 is the median.
    /// - Returns: The latency, or nil when none is recorded.
    public func percentile(_ fraction: Double) -> Duration? {
        guard !latencies.isEmpty else { return nil }
        let rank = Int((fraction * Double(latencies.count)).rounded(.up)) - 1
        return Self.select(Swift.min(Swift.max(rank, 0), latencies.count - 1), in: Array(latencies))
    }

    /// The element that would stand at `rank` if `values` were sorted, found by selection
    /// (Hoare's quickselect, expected linear time) rather than a sort of every value.
    private static func select(_ rank: Int, in values: [Duration]) -> Duration {
        var values = values
        var (low, high) = (0, values.count - 1)
        while low < high {
            let pivot = values[(low + high) / 2]
            var (left, right) = (low, high)
            while left <= right {
                while values[left] < pivot { left += 1 }
                while values[right] > pivot { right -= 1 }
                if left <= right {
                    values.swapAt(left, right)
                    left += 1
                    right -= 1
                }
            }
            if rank <= right {
                high = right
            } else if rank >= left {
                low = left
            } else {
                return values[rank]
            }
        }
        return values[rank]
    }

    /// The median.
    public var p50: Duration? { percentile(0.5) }
    /// The 99th percentile.
    public var p99: Duration? { percentile(0.99) }
    /// The largest.
    public var max: Duration? { latencies.max() }
}

extension PurgeLatencyStatistics {
    private enum CodingKeys: String, CodingKey {
        case count, p50Seconds, p99Seconds, maxSeconds
    }

    /// Encodes the summary, its latencies as numbers of seconds (not every latency kept).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
        try container.encodeIfPresent(seconds: p50, forKey: .p50Seconds)
        try container.encodeIfPresent(seconds: p99, forKey: .p99Seconds)
        try container.encodeIfPresent(seconds: max, forKey: .maxSeconds)
    }
}

extension PurgeLatencyStatistics: CustomStringConvertible {
    /// The summary for people and logs: `3 purge latencies: p50 4.1 ms, p99 9.8 ms, max 9.8 ms`,
    /// or `no purge latencies`.
    public var description: String {
        guard let p50, let p99, let max else { return "no purge latencies" }
        return "\(count) purge latenc\(count == 1 ? "y" : "ies"): p50 \(p50.readable), p99 \(p99.readable), max \(max.readable)"
    }
}
