extension MemoryBudget {
    /// Where the levels begin and end, as fractions of the budget, with hysteresis: a level begins
    /// at its threshold and ends only below its lower recovery threshold.
    public struct Thresholds: Hashable, Sendable {
        /// The four fractions of the budget.
        public struct Ratios: Hashable, Sendable {
            /// Warning begins at this fraction.
            public var warning: Double
            /// Critical begins at this fraction.
            public var critical: Double
            /// Warning ends below this fraction.
            public var warningRecovery: Double
            /// Critical ends below this fraction.
            public var criticalRecovery: Double
        }

        /// The fractions, checked to be in order.
        public let ratios: Ratios

        /// Thresholds at the given fractions of the budget, checked to be in the order
        /// `0 < warningRecovery < warning < critical <= 1` and
        /// `warningRecovery <= criticalRecovery < critical`.
        public init(
            warning: Double,
            critical: Double,
            warningRecovery: Double,
            criticalRecovery: Double
        ) throws(MemoryPressureError) {
            let ratios = Ratios(
                warning: warning, critical: critical,
                warningRecovery: warningRecovery, criticalRecovery: criticalRecovery
            )
            guard warningRecovery > 0, warningRecovery < warning, warning < critical, critical <= 1,
                  warningRecovery <= criticalRecovery, criticalRecovery < critical
            else { throw .thresholdsOutOfOrder(ratios) }
            self.ratios = ratios
        }

        /// Warning from 80% of the budget until below 70%; critical from 95% until below 85%.
        public static let standard = Thresholds(
            checked: Ratios(warning: 0.80, critical: 0.95, warningRecovery: 0.70, criticalRecovery: 0.85)
        )

        private init(checked ratios: Ratios) {
            self.ratios = ratios
        }
    }
}
