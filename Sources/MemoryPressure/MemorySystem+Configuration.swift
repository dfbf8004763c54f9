import Logging
import SystemPackage

extension MemorySystem {
    /// How a memory system samples, judges and reclaims. Only the budget is required.
    public struct Configuration: Sendable {
        /// How the pressure monitor samples and judges; its budget is the system's budget.
        public var monitor: PressureMonitor.Configuration
        /// The footprint the ladder works down to, as a fraction of the budget: a low watermark
        /// below the warning threshold. Nil: the warning level's recovery threshold (70% of the
        /// budget with the standard thresholds).
        public var targetRatio: Double?
        /// How long the ladder waits for the apps to finish with a memory warning before it goes
        /// on: an app whose run loop is blocked cannot hold reclamation up. Default 2 s.
        public var warningTimeout: Duration = .seconds(2)
        /// Where apps save their state, or nil for no state archive.
        public var stateArchiveDirectory: FilePath?
        /// Where the system logs level changes, purges and terminations.
        public var logger: Logger

        /// The defaults, judged against `budget`.
        public init(
            budget: MemoryBudget,
            stateArchiveDirectory: FilePath? = nil,
            logger: Logger = Logger(label: "MemoryPressure.MemorySystem")
        ) {
            self.monitor = PressureMonitor.Configuration(budget: budget, logger: logger)
            self.stateArchiveDirectory = stateArchiveDirectory
            self.logger = logger
        }

        /// The budget samples are judged against.
        public var budget: MemoryBudget {
            get { monitor.budget }
            set { monitor.budget = newValue }
        }

        /// The target in bytes, checked to lie above zero and below the warning threshold.
        func targetBytes() throws(MemoryPressureError) -> Int {
            let warning = budget.thresholds.ratios.warning
            let ratio = targetRatio ?? budget.thresholds.ratios.warningRecovery
            guard ratio > 0, ratio < warning else {
                throw .targetOutOfRange(ratio: ratio, warningRatio: warning)
            }
            return Int(Double(budget.totalBytes) * ratio)
        }
    }
}
