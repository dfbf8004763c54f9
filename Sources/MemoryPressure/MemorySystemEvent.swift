/// What a ``MemorySystem`` did, as it did it.
public enum MemorySystemEvent: Sendable {
    /// The monitor announced a level: a rise, a fall or a repeat.
    case pressure(PressureChange)
    /// Caches and stores were purged, by the step named.
    case purge(PurgeReport, step: ReclamationStep)
    /// Memory warnings were delivered, by the step named (`warning` or `softLimit`).
    case warning(WarningDelivery, step: ReclamationStep)
    /// An app was terminated, and its run loop has drained.
    case termination(TerminationRecord)
    /// A run of the ladder ended.
    case ladderRun(LadderRun)
}
