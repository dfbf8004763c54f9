import MemoryPressure

extension TerminationReason {
    /// The reason as a metric dimension's value: its case name.
    var metricValue: String {
        switch self {
        case .systemPressure: "systemPressure"
        case .perAppLimit: "perAppLimit"
        case .deadline: "deadline"
        case .backgroundTaskExpired: "backgroundTaskExpired"
        case .explicit: "explicit"
        }
    }
}
