/// What a scenario's user does at random: after each decision a gap drawn from an exponential
/// distribution, then one of the kinds of decision drawn by weight, with its figures drawn from
/// their ranges. Every draw comes from the scenario's seed.
package struct RandomActivity: Hashable, Sendable {
    /// A kind of random decision.
    package enum Kind: String, Hashable, Sendable, CaseIterable {
        case open, home, interruption, backgroundLaunch, spike
    }

    /// The relative weights of the kinds of decision; a weight of 0 leaves that kind out.
    package struct Weights: Hashable, Sendable {
        /// Opening another app (switching to it).
        package var open: Double
        /// Going to the home screen.
        package var home: Double
        /// An interruption of the foreground app.
        package var interruption: Double
        /// A launch of an app into the background.
        package var backgroundLaunch: Double
        /// A memory spike in the foreground app.
        package var spike: Double

        /// Weights for each kind.
        package init(open: Double, home: Double, interruption: Double, backgroundLaunch: Double, spike: Double) {
            self.open = open
            self.home = home
            self.interruption = interruption
            self.backgroundLaunch = backgroundLaunch
            self.spike = spike
        }

        /// The weight of `kind`.
        package subscript(kind: Kind) -> Double {
            switch kind {
            case .open: open
            case .home: home
            case .interruption: interruption
            case .backgroundLaunch: backgroundLaunch
            case .spike: spike
            }
        }
    }

    /// The mean time between decisions.
    package var meanGap: Duration
    /// How often each kind of decision is made.
    package var weights: Weights
    /// How long an interruption lasts.
    package var interruptionLength: ClosedRange<Duration>
    /// How long a launch into the background works before the app suspends.
    package var backgroundWork: ClosedRange<Duration>
    /// How large a memory spike is.
    package var spikeBytes: ClosedRange<Int>
    /// How long a spike's memory is held.
    package var spikeHold: ClosedRange<Duration>

    /// Random activity with these figures.
    package init(
        meanGap: Duration, weights: Weights, interruptionLength: ClosedRange<Duration>,
        backgroundWork: ClosedRange<Duration>, spikeBytes: ClosedRange<Int>, spikeHold: ClosedRange<Duration>
    ) {
        self.meanGap = meanGap
        self.weights = weights
        self.interruptionLength = interruptionLength
        self.backgroundWork = backgroundWork
        self.spikeBytes = spikeBytes
        self.spikeHold = spikeHold
    }
}
