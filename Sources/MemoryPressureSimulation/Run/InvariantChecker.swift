import MemoryPressure
import Synchronization

/// Checks, while a simulation runs, what the memory system promises:
/// - no active (or inactive) app is terminated for system pressure;
/// - every pressure termination takes the largest suspended app at that moment, and a background
///   app only when no suspended app is left;
/// - every memory warning reaches every running app's delegate, view controllers and observers,
///   each exactly once;
/// - every app's callbacks come in a valid sequence (``CallbackSequence``);
/// - every relaunch after a termination restores the state saved last (from the ``AppJournal``).
///
/// It follows the apps' states from the lifecycle events themselves (never asking an app, since
/// lifecycle observers run under the app's lock), and reads footprints from the system's registry.
final class InvariantChecker: Sendable {
    /// What the apps looked like when one of them stopped running.
    private struct Snapshot {
        var state: AppState
        var footprintBytes: Int
        var suspended: [(app: AppIdentifier, footprintBytes: Int)]
    }

    private struct State {
        var states: [AppIdentifier: AppState] = [:]
        /// Each app's state changes, in order, with when they were reported.
        var history: [AppIdentifier: [(time: ContinuousClock.Instant, state: AppState)]] = [:]
        var callbacks: [AppIdentifier: CallbackSequence] = [:]
        var stopping: [AppIdentifier: Snapshot] = [:]
        var violations: [String] = []
    }

    private let state = Mutex(State())
    private let footprint: @Sendable (AppIdentifier) -> Int
    private let journal: AppJournal
    private let start: ContinuousClock.Instant

    /// A checker reading app footprints with `footprint` and warning receipts from `journal`;
    /// violations are timed from `start`.
    init(journal: AppJournal, start: ContinuousClock.Instant, footprint: @escaping @Sendable (AppIdentifier) -> Int) {
        self.journal = journal
        self.start = start
        self.footprint = footprint
    }

    /// Every violation so far, the journal's lost states included.
    var violations: [String] {
        state.withLock { $0.violations } + journal.lostStates
    }

    // MARK: Lifecycle

    /// Follows one lifecycle event; called synchronously as the app reports it.
    func observe(_ event: LifecycleEvent, at time: ContinuousClock.Instant = .now) {
        switch event {
        case .stateChanged(let app, let from, let to):
            let snapshot = to == .notRunning ? snapshot(stopping: app, from: from) : nil
            state.withLock { state in
                state.states[app] = to
                state.history[app, default: []].append((time, to))
                if let snapshot { state.stopping[app] = snapshot }
            }
        case .terminated(let app, let reason, let from):
            journal.recordTermination(of: app)
            state.withLock { state in
                let snapshot = state.stopping.removeValue(forKey: app)
                guard reason == .systemPressure else { return }
                if let problem = Self.pressureProblem(app, from: from, snapshot: snapshot) {
                    state.violations.append(at(time) + problem)
                }
            }
        case .callback(let app, let callback):
            state.withLock { state in
                if let problem = state.callbacks[app, default: CallbackSequence()].accept(callback) {
                    state.violations.append(at(time) + "\(app): \(problem)")
                }
            }
        case .released(let app):
            state.withLock { $0.callbacks[app, default: CallbackSequence()].released() }
        case .restorationFailed:
            break
        }
    }

    /// The footprints of `app` and of the suspended apps as `app` stops running.
    private func snapshot(stopping app: AppIdentifier, from: AppState) -> Snapshot {
        let suspended = state.withLock { state in
            state.states.filter { $0.key != app && $0.value == .suspended }.map(\.key)
        }
        return Snapshot(
            state: from, footprintBytes: footprint(app),
            suspended: suspended.map { ($0, footprint($0)) }
        )
    }

    private static func pressureProblem(_ app: AppIdentifier, from: AppState, snapshot: Snapshot?) -> String? {
        switch from {
        case .active, .inactive:
            return "\(app) was terminated for system pressure while \(from)"
        case .suspended:
            guard let snapshot, let larger = snapshot.suspended.max(by: { $0.footprintBytes < $1.footprintBytes }),
                  larger.footprintBytes > snapshot.footprintBytes
            else { return nil }
            return "\(app) (\(ByteCount(snapshot.footprintBytes))) was terminated for system pressure while the larger "
                + "\(larger.app) (\(ByteCount(larger.footprintBytes))) was suspended"
        case .background:
            guard let suspended = snapshot?.suspended.first else { return nil }
            return "\(app) was terminated for system pressure in the background while \(suspended.app) was suspended"
        case .notRunning:
            return nil
        }
    }

    // MARK: Warnings

    /// Checks one fan-out of a memory warning against what the apps heard.
    func check(_ delivery: WarningDelivery) {
        let warning = delivery.warning.time
        let receipts = journal.takeReceipts(of: warning)
        var problems: [String] = []
        for (app, receipt) in receipts.sorted(by: { $0.key < $1.key }) {
            if receipt.delegates != 1 {
                problems.append("reached \(app)'s delegate \(receipt.delegates) times")
            }
            if receipt.controllers.count != receipt.expectedControllers || receipt.controllers.values.contains(where: { $0 != 1 }) {
                problems.append("reached \(receipt.controllers.count) of \(app)'s \(receipt.expectedControllers) view controllers, "
                    + "\(receipt.controllers.values.filter { $0 != 1 }.count) of them not exactly once")
            }
            if receipt.observers.count != receipt.expectedObservers || receipt.observers.values.contains(where: { $0 != 1 }) {
                problems.append("reached \(receipt.observers.count) of \(app)'s \(receipt.expectedObservers) observers, "
                    + "\(receipt.observers.values.filter { $0 != 1 }.count) of them not exactly once")
            }
        }
        let heard = receipts.values.reduce(into: (0, 0, 0)) { $0.0 += $1.delegates; $0.1 += $1.controllers.count; $0.2 += $1.observers.count }
        if heard != (delivery.delegatesReached, delivery.viewControllersReached, delivery.observersReached) {
            problems.append("the system counted \(delivery.delegatesReached) delegates, \(delivery.viewControllersReached) controllers and "
                + "\(delivery.observersReached) observers, the apps \(heard.0), \(heard.1) and \(heard.2)")
        }
        let end = warning + delivery.duration
        let missed = state.withLock { state in
            state.history.keys.filter { app in receipts[app] == nil && Self.isRunning(state.history[app] ?? [], throughout: warning ... end) }
        }
        problems += missed.sorted().map { "did not reach \($0), running throughout" }
        guard !problems.isEmpty else { return }
        state.withLock { state in
            state.violations += problems.map { at(warning) + "memory warning \($0)" }
        }
    }

    /// Whether the states in `history` were running all through `interval`.
    private static func isRunning(_ history: [(time: ContinuousClock.Instant, state: AppState)], throughout interval: ClosedRange<ContinuousClock.Instant>) -> Bool {
        guard let before = history.last(where: { $0.time <= interval.lowerBound }), before.state.isRunning else { return false }
        return !history.contains { interval.lowerBound < $0.time && $0.time <= interval.upperBound && !$0.state.isRunning }
    }

    private func at(_ time: ContinuousClock.Instant) -> String {
        "at \((time - start).secondsText)s: "
    }
}
