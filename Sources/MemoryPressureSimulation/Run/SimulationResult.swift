/// What a simulation returns: the report and the timeline it was computed from.
package struct SimulationResult: Hashable, Sendable {
    /// The figures.
    package var report: SimulationReport
    /// The footprint over time, with the system's actions.
    package var timeline: Timeline
}
