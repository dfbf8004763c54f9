/// What a measurement reads again of the footprints a ``FootprintContributor`` keeps (the process
/// apps' children), and what it takes as last read.
package enum ContributionReading: Sendable {
    /// Every figure read again, kept or not: the reference the kept figures answer to.
    case everything
    /// What can change read again (a running child); what cannot (a frozen child) as last read.
    /// What a sample reads.
    case changing
    /// Nothing read: every figure as last read. For a measurement right after a change the
    /// contributor has counted itself: the ladder's, after a termination (the victim's figure is
    /// gone from the sum with it), so that no other child is read again.
    case nothing
}
