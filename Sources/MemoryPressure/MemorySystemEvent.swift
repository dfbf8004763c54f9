/// What a ``MemorySystem`` did, as it did it. The pressure level is the monitor's to announce
/// (``PressureMonitor/events``).
public enum MemorySystemEvent: Sendable {
    /// Caches and stores were purged, by the step named.
    case purge(PurgeReport, step: ReclamationStep)
    /// Memory warnings were delivered, by the step named (`warning` or `softLimit`).
    case warning(WarningDelivery, step: ReclamationStep)
    /// An app was terminated, and its run loop has drained.
    case termination(TerminationRecord)
    /// A run of the ladder ended.
    case ladderRun(LadderRun)
}
