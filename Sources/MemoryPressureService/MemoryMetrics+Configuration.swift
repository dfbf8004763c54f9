import Metrics

extension MemoryMetrics {
    /// What a ``MemoryMetrics`` records, under which names, and with which backend.
    public struct Configuration: Sendable {
        /// The most apps `maximumAppLabels` accepts.
        public static let appLabelRange = 0...1000
        /// The intervals `appFootprintInterval` accepts.
        public static let appFootprintIntervalRange: ClosedRange<Duration> = .milliseconds(10) ... .seconds(3600)

        /// The start of every metric's label, such as `memory_pressure` in
        /// `memory_pressure_footprint_bytes`.
        public let prefix: String
        /// How many apps get a footprint gauge of their own: the largest at each update. The rest
        /// are summed in one gauge, so the number of series stays bounded however many apps come
        /// and go.
        public let maximumAppLabels: Int
        /// Time between updates of the per-app footprint gauges (the process-wide gauges follow
        /// every sample).
        public let appFootprintInterval: Duration
        /// The backend, or nil for the one bootstrapped with `MetricsSystem` when recording starts.
        public let factory: (any MetricsFactory)?

        /// The defaults: prefix `memory_pressure`, 10 app labels, per-app gauges every second, the
        /// bootstrapped backend.
        public static let standard = Configuration(
            validPrefix: "memory_pressure", maximumAppLabels: 10, appFootprintInterval: .seconds(1), factory: nil
        )

        /// A configuration with these settings, each checked: the prefix is a Prometheus-style
        /// name (`[a-zA-Z_:][a-zA-Z0-9_:]*`), the app labels lie in ``appLabelRange`` and the
        /// interval in ``appFootprintIntervalRange``.
        public init(
            prefix: String = "memory_pressure",
            maximumAppLabels: Int = 10,
            appFootprintInterval: Duration = .seconds(1),
            factory: (any MetricsFactory)? = nil
        ) throws(MemoryMetricsConfigurationError) {
            guard Self.isMetricName(prefix) else {
                throw MemoryMetricsConfigurationError(.invalidPrefix(prefix))
            }
            guard Self.appLabelRange.contains(maximumAppLabels) else {
                throw MemoryMetricsConfigurationError(.appLabelsOutOfRange(maximumAppLabels))
            }
            guard Self.appFootprintIntervalRange.contains(appFootprintInterval) else {
                throw MemoryMetricsConfigurationError(.intervalOutOfRange(appFootprintInterval))
            }
            self.init(
                validPrefix: prefix, maximumAppLabels: maximumAppLabels,
                appFootprintInterval: appFootprintInterval, factory: factory
            )
        }

        private init(validPrefix: String, maximumAppLabels: Int, appFootprintInterval: Duration, factory: (any MetricsFactory)?) {
            self.prefix = validPrefix
            self.maximumAppLabels = maximumAppLabels
            self.appFootprintInterval = appFootprintInterval
            self.factory = factory
        }

        /// `prefix`, an underscore and `name`.
        func label(_ name: String) -> String {
            "\(prefix)_\(name)"
        }

        private static func isMetricName(_ text: String) -> Bool {
            guard let first = text.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
            return text.unicodeScalars.allSatisfy { scalar in
                ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || scalar == "_" || scalar == ":"
            }
        }
    }
}

/// A metrics configuration that was rejected, with the accepted form.
public struct MemoryMetricsConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public enum Problem: Hashable, Sendable {
        /// The prefix is not a metric name.
        case invalidPrefix(String)
        /// The number of app labels is outside ``MemoryMetrics/Configuration/appLabelRange``.
        case appLabelsOutOfRange(Int)
        /// The interval is outside ``MemoryMetrics/Configuration/appFootprintIntervalRange``.
        case intervalOutOfRange(Duration)
    }

    /// What is wrong.
    public let problem: Problem

    /// An error for `problem`.
    public init(_ problem: Problem) {
        self.problem = problem
    }

    public var description: String {
        switch problem {
        case .invalidPrefix(let prefix):
            "metrics prefix \(prefix.debugDescription) is not a metric name; expected letters, digits, '_' or ':', not starting with a digit"
        case .appLabelsOutOfRange(let count):
            "maximumAppLabels of \(count) is out of range; expected \(MemoryMetrics.Configuration.appLabelRange.lowerBound) to \(MemoryMetrics.Configuration.appLabelRange.upperBound)"
        case .intervalOutOfRange(let interval):
            "appFootprintInterval of \(interval) is out of range; expected \(MemoryMetrics.Configuration.appFootprintIntervalRange.lowerBound) to \(MemoryMetrics.Configuration.appFootprintIntervalRange.upperBound)"
        }
    }
}
