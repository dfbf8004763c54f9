/// An instant of the continuous clock, held as its distance from a fixed instant of the process:
/// the form in which the monitor's sampling thread keeps its times.
///
/// `ContinuousClock.Instant` is not a frozen type (the `_Concurrency` module declares it without
/// `@frozen`), so every value that holds one, an optional, a tuple, a sample, is laid out at run
/// time: copying, comparing or storing it goes through the runtime's generic value witnesses. On
/// the sampling thread, whose every pass starts with cold caches after its wait, that generic code
/// was a measurable share of the pass (BENCHMARKS.md, issue 41). A `Moment` is a `Duration`, of
/// fixed layout, and converts to and from an instant exactly.
package struct Moment: Comparable, Hashable, Sendable {
    /// The distance from ``origin``.
    package var sinceOrigin: Duration

    /// The instant every moment is measured from: the continuous clock's time when a moment was
    /// first made in the process.
    package static let origin = ContinuousClock.now

    /// The moment of `instant`.
    package init(_ instant: ContinuousClock.Instant) {
        sinceOrigin = instant - Self.origin
    }

    /// The instant this moment is.
    package var instant: ContinuousClock.Instant { Self.origin + sinceOrigin }

    // All four comparisons, not `<` alone: the others' default implementations call `<` through
    // the `Comparable` witness table.
    package static func < (lhs: Moment, rhs: Moment) -> Bool {
        lhs.sinceOrigin < rhs.sinceOrigin
    }

    package static func <= (lhs: Moment, rhs: Moment) -> Bool {
        !(rhs.sinceOrigin < lhs.sinceOrigin)
    }

    package static func > (lhs: Moment, rhs: Moment) -> Bool {
        rhs.sinceOrigin < lhs.sinceOrigin
    }

    package static func >= (lhs: Moment, rhs: Moment) -> Bool {
        !(lhs.sinceOrigin < rhs.sinceOrigin)
    }

    package static func + (moment: Moment, duration: Duration) -> Moment {
        var later = moment
        later.sinceOrigin += duration
        return later
    }

    package static func - (later: Moment, earlier: Moment) -> Duration {
        later.sinceOrigin - earlier.sinceOrigin
    }
}
