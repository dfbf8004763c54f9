import MemoryPressure

/// Every decision a scenario's user makes, in time order: what to open, when to go home, when an
/// interruption, a launch into the background or a spike comes. A pure function of the scenario:
/// the same scenario and seed always give the same plan, wherever and however often it is made.
///
/// The session begins by opening the scenario's first app. The scheduled events and the random
/// process are merged in time order; the random process keeps track of which app the user has in
/// the foreground, so it switches to another app, and interrupts or spikes only when one is open.
package struct SimulationPlan: Hashable, Sendable {
    /// The decisions, in time order.
    package let actions: [PlannedAction]

    /// The plan of `scenario`.
    package init(scenario: Scenario) {
        var builder = Builder(scenario: scenario)
        actions = builder.build()
    }

    /// A digest of the decisions (FNV-1a, 64 bits, in hex): equal plans have equal digests, so two
    /// runs' reports show at a glance whether they made the same decisions.
    package var digest: String {
        let bytes = actions.map(\.description).joined(separator: "\n").utf8
        let hash = bytes.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Walks the scheduled events and the random process together, in time order.
    private struct Builder {
        let scenario: Scenario
        var generator: SeededGenerator
        var foreground: AppIdentifier?
        /// The apps the user or an event has launched so far.
        var launched: Set<AppIdentifier> = []
        var actions: [PlannedAction] = []

        init(scenario: Scenario) {
            self.scenario = scenario
            generator = SeededGenerator(seed: scenario.seed, stream: 0)
            foreground = scenario.apps.first?.name
            launched = Set(foreground.map { [$0] } ?? [])
        }

        mutating func build() -> [PlannedAction] {
            if let first = foreground {
                actions.append(PlannedAction(time: .zero, kind: .open(first)))
            }
            var scheduled = scenario.events.enumerated()
                .sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
                .map(\.element)[...]
            var nextRandom = scenario.randomActivity.map { nextGap(after: .zero, $0) }
            while true {
                if let event = scheduled.first, nextRandom.map({ event.time <= $0 }) ?? true {
                    schedule(event)
                    scheduled = scheduled.dropFirst()
                } else if let time = nextRandom, time < scenario.duration, let activity = scenario.randomActivity {
                    let busyUntil = decide(at: time, activity)
                    nextRandom = nextGap(after: busyUntil, activity)
                } else {
                    break
                }
            }
            return actions
                .filter { $0.time <= scenario.duration }
                .enumerated()
                .sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
                .map(\.element)
        }

        /// The time of the next random decision after `time`.
        mutating func nextGap(after time: Duration, _ activity: RandomActivity) -> Duration {
            time + milliseconds(generator.exponential(mean: activity.meanGap / .seconds(1)))
        }

        mutating func schedule(_ event: ScenarioEvent) {
            switch event.action {
            case .open(let app):
                foreground = app
                launched.insert(app)
                append(event.time, .open(app))
            case .home:
                foreground = nil
                append(event.time, .home)
            case .interruption(let length):
                append(event.time, .beginInterruption)
                append(event.time + length, .endInterruption)
            case .backgroundLaunch(let app, let work):
                launched.insert(app)
                append(event.time, .backgroundLaunch(app, work: work))
            case .spike(let bytes, let hold):
                append(event.time, .beginSpike(bytes: bytes))
                append(event.time + hold, .endSpike)
            }
        }

        /// Draws one random decision at `time`; returns when the user is free to decide again. At
        /// the home screen the user opens an app rather than interrupting or spiking nothing; an
        /// event launches into the background an app the user has not launched if there is one.
        mutating func decide(at time: Duration, _ activity: RandomActivity) -> Duration {
            let kinds = RandomActivity.Kind.allCases
            guard let index = generator.weightedIndex(kinds.map { activity.weights[$0] }) else { return scenario.duration }
            var kind = kinds[index]
            if foreground == nil, kind != .backgroundLaunch, activity.weights.open > 0 { kind = .open }
            let others = scenario.apps.map(\.name).filter { $0 != foreground }
            switch kind {
            case .open:
                guard let app = pick(from: others) else { return time }
                foreground = app
                launched.insert(app)
                append(time, .open(app))
            case .home:
                guard foreground != nil else { return time }
                foreground = nil
                append(time, .home)
            case .interruption:
                guard foreground != nil else { return time }
                let length = draw(activity.interruptionLength)
                append(time, .beginInterruption)
                append(time + length, .endInterruption)
                return time + length
            case .backgroundLaunch:
                let notLaunched = others.filter { !launched.contains($0) }
                guard let app = pick(from: notLaunched.isEmpty ? others : notLaunched) else { return time }
                launched.insert(app)
                append(time, .backgroundLaunch(app, work: draw(activity.backgroundWork)))
            case .spike:
                guard foreground != nil else { return time }
                let mebibytes = generator.uniform(in: activity.spikeBytes.lowerBound >> 20 ... activity.spikeBytes.upperBound >> 20)
                let hold = draw(activity.spikeHold)
                append(time, .beginSpike(bytes: max(mebibytes << 20, activity.spikeBytes.lowerBound)))
                append(time + hold, .endSpike)
                return time + hold
            }
            return time
        }

        mutating func pick(from apps: [AppIdentifier]) -> AppIdentifier? {
            apps.isEmpty ? nil : apps[generator.uniform(in: 0 ... apps.count - 1)]
        }

        mutating func draw(_ range: ClosedRange<Duration>) -> Duration {
            milliseconds(generator.uniform(in: range.lowerBound / .seconds(1) ... range.upperBound / .seconds(1)))
        }

        mutating func append(_ time: Duration, _ kind: PlannedAction.Kind) {
            actions.append(PlannedAction(time: time, kind: kind))
        }

        /// `seconds`, to the millisecond.
        func milliseconds(_ seconds: Double) -> Duration {
            .milliseconds(Int64((seconds * 1000).rounded()))
        }
    }
}
