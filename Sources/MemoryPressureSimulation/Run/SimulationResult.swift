/// What a simulation returns: the report and the timeline it was computed from.
public struct SimulationResult: Hashable, Sendable {
    /// The figures.
    public var report: SimulationReport
    /// The footprint over time, with the system's actions.
    public var timeline: Timeline
}
