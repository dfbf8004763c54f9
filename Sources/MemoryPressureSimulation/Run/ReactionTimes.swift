/// How fast the reclamation ladder reacted to each episode of pressure: from the episode's crossing
/// (the heap allocation or the sample that crossed the threshold, `LadderRun.crossingTime`) to the
/// start of its first ladder run (`LadderRun.startTime`).
///
/// The ladder's runs come in order, and every run of one episode carries the episode's crossing, so
/// the first run with a crossing other than the last one's begins an episode. A run outside an
/// episode (the level still raised after the last one closed, a sample above target again) takes
/// its sample's time as its crossing, and counts as an episode of its own.
struct ReactionTimes: Hashable, Sendable {
    /// One reaction per episode, in order.
    private(set) var durations: [Duration] = []
    private var lastCrossing: ContinuousClock.Instant?

    /// Takes one ladder run's crossing and start, in the order the runs came.
    mutating func record(crossing: ContinuousClock.Instant, start: ContinuousClock.Instant) {
        guard crossing != lastCrossing else { return }
        lastCrossing = crossing
        durations.append(start - crossing)
    }
}
