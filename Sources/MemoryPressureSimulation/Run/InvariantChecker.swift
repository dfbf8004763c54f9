import MemoryPressure
import Synchronization

/// Checks, while a simulation runs, what the memory system promises:
/// - no app is terminated for system pressure unless it was suspended or in the background, as the
///   checker saw it leave (whatever state the termination reports);
/// - no app code runs while its app is suspended: no delegate callback (`willTerminate` after a
///   suspension among them), no memory warning, no notification delivered to its observers;
/// - every pressure termination takes the largest suspended app at that moment, and a background
///   app only when no suspended app is left;
/// - every memory warning reaches every running app's delegate, view controllers and observers,
///   each exactly once (an app whose run loop was still busy when the warning's timeout passed, as
///   the system reports it, finishes its part later, uncounted, and is not judged);
/// - every app's callbacks come in a valid sequence (``CallbackSequence``);
/// - every relaunch after a termination restores the state saved last (from the ``AppJournal``).
///
/// It follows the apps' states from the lifecycle events themselves (never asking an app, since
/// lifecycle observers run under the app's lock), and reads footprints from the system's registry.
/// "At that moment" is judged without races: the apps compared with a pressure termination's victim
/// are those suspended all the way from the start of the ladder run that chose it until the victim
/// stopped (for a background victim, until its `willTerminate`), whose footprints cannot have grown
/// meanwhile, since suspended apps run no code.
final class InvariantChecker: Sendable {
    /// An app as it stopped running, and the suspended apps' footprints then.
    struct Stop: Sendable {
        var time: ContinuousClock.Instant
        var state: AppState
        var footprintBytes: Int
        var suspendedFootprints: [AppIdentifier: Int]
    }

    private struct State {
        var states: [AppIdentifier: AppState] = [:]
        /// Each app's state changes, in order, with when they were reported.
        var history: [AppIdentifier: [(time: ContinuousClock.Instant, state: AppState)]] = [:]
        var callbacks: [AppIdentifier: CallbackSequence] = [:]
        /// The last stop of each app, until its termination's reason is known.
        var stopping: [AppIdentifier: Stop] = [:]
        /// Apps terminated for system pressure, until the ladder run that chose them is checked.
        var pressureVictims: [AppIdentifier: Stop] = [:]
        /// When each app's last `willTerminate` began.
        var willTerminate: [AppIdentifier: ContinuousClock.Instant] = [:]
        /// Each app's footprint as its last termination found it, from the system's record: the
        /// system's own bookkeeping hears of a termination first and closes the app's heap, so the
        /// app's footprint read when the checker hears of it is already what is left.
        var terminationFootprints: [AppIdentifier: Int] = [:]
        /// With process apps: the memory warnings their delegates were called with, in order, until
        /// the fan-out they belong to is checked.
        var processWarnings: [(app: AppIdentifier, time: ContinuousClock.Instant)] = []
        var violations: [String] = []
    }

    private let state = Mutex(State())
    private let footprint: @Sendable (AppIdentifier) -> Int
    private let journal: AppJournal
    private let start: ContinuousClock.Instant
    /// Whether the apps are process apps, whose delegates (in other processes) write nothing in the
    /// journal: a warning's receipts are then the `didReceiveMemoryWarning` callbacks the system
    /// made during its fan-out, and no app has view controllers or observers in this process.
    private let processApps: Bool

    /// A checker reading app footprints with `footprint` and warning receipts from `journal` (or,
    /// for `processApps`, from the callbacks); violations are timed from `start`.
    init(journal: AppJournal, start: ContinuousClock.Instant, processApps: Bool = false, footprint: @escaping @Sendable (AppIdentifier) -> Int) {
        self.journal = journal
        self.start = start
        self.processApps = processApps
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
            let stop = to == .notRunning ? self.stop(of: app, from: from, at: time) : nil
            state.withLock { state in
                state.states[app] = to
                state.history[app, default: []].append((time, to))
                if let stop { state.stopping[app] = stop }
            }
        case .terminated(let app, let reason, let from):
            journal.recordTermination(of: app)
            state.withLock { state in
                let stop = state.stopping.removeValue(forKey: app)
                guard reason == .systemPressure else { return }
                let left = stop?.state ?? state.states[app] ?? from
                if left != .suspended && left != .background {
                    state.violations.append(at(time) + "\(app) was terminated for system pressure while \(left)")
                } else if let stop {
                    state.pressureVictims[app] = stop
                }
            }
        case .callback(let app, let callback):
            state.withLock { state in
                if callback == .willTerminate { state.willTerminate[app] = time }
                if processApps, callback == .didReceiveMemoryWarning { state.processWarnings.append((app, time)) }
                if state.states[app] == .suspended {
                    let problem = switch callback {
                    case .willTerminate: "willTerminate came after it was suspended"
                    case .didReceiveMemoryWarning: "a memory warning reached it while it was suspended"
                    default: "\(callback) ran while it was suspended"
                    }
                    state.violations.append(at(time) + "\(app): \(problem)")
                }
                if let problem = state.callbacks[app, default: CallbackSequence()].accept(callback) {
                    state.violations.append(at(time) + "\(app): \(problem)")
                }
            }
        case .delivered(let app, let name):
            state.withLock { state in
                if state.states[app] == .suspended {
                    state.violations.append(at(time) + "\(app): its observers heard \(name) while it was suspended")
                }
            }
        case .released(let app):
            state.withLock { $0.callbacks[app, default: CallbackSequence()].released() }
        case .restorationFailed:
            break
        }
    }

    /// `app` as it stops running, with the footprints of the apps suspended then.
    private func stop(of app: AppIdentifier, from: AppState, at time: ContinuousClock.Instant) -> Stop {
        let suspended = state.withLock { state in
            state.states.filter { $0.key != app && $0.value == .suspended }.map(\.key)
        }
        return Stop(
            time: time, state: from, footprintBytes: footprint(app),
            suspendedFootprints: Dictionary(uniqueKeysWithValues: suspended.map { ($0, footprint($0)) })
        )
    }

    // MARK: Pressure terminations

    /// Checks the pressure terminations of one ladder run, begun at `runStart`, which terminated
    /// `victims` in order.
    func checkLadderRun(startedAt runStart: ContinuousClock.Instant, victims: [AppIdentifier]) {
        state.withLock { state in
            for victim in victims {
                guard var stop = state.pressureVictims.removeValue(forKey: victim) else { continue }
                stop.footprintBytes = state.terminationFootprints.removeValue(forKey: victim) ?? stop.footprintBytes
                let chosenBy = stop.state == .background ? (state.willTerminate[victim] ?? stop.time) : stop.time
                let competitors = stop.suspendedFootprints.filter { app, _ in
                    Self.isSuspended(state.history[app] ?? [], throughout: runStart ... chosenBy)
                }
                if stop.state == .background, let suspended = competitors.keys.min() {
                    state.violations.append(at(stop.time) + "\(victim) was terminated for system pressure in the background while \(suspended) was suspended")
                } else if stop.state == .suspended, let larger = competitors.max(by: { $0.value < $1.value }), larger.value > stop.footprintBytes {
                    state.violations.append(at(stop.time) + "\(victim) (\(ByteCount(stop.footprintBytes))) was terminated for system pressure "
                        + "while the larger \(larger.key) (\(ByteCount(larger.value))) was suspended")
                }
            }
        }
    }

    /// Whether the states in `history` were `suspended` all through `interval`.
    private static func isSuspended(_ history: [(time: ContinuousClock.Instant, state: AppState)], throughout interval: ClosedRange<ContinuousClock.Instant>) -> Bool {
        guard let before = history.last(where: { $0.time <= interval.lowerBound }), before.state == .suspended else { return false }
        return !history.contains { interval.lowerBound < $0.time && $0.time <= interval.upperBound }
    }

    // MARK: The system's reports

    /// Checks what the system reports: warning fan-outs and ladder runs.
    func check(_ event: MemorySystemEvent) {
        switch event {
        case .warning(let delivery, .warning):
            checkWarning(
                raisedAt: delivery.warning.time, duration: delivery.duration,
                reached: (delivery.delegatesReached, delivery.viewControllersReached, delivery.observersReached),
                timedOut: Set(delivery.appsTimedOut)
            )
        case .termination(let record):
            state.withLock { $0.terminationFootprints[record.app] = record.footprintBytes }
        case .ladderRun(let run):
            let steps = run.steps.filter { $0.step == .terminateSuspended || $0.step == .terminateBackground }
            checkLadderRun(startedAt: run.startTime, victims: steps.flatMap(\.terminated))
        default:
            break
        }
    }

    // MARK: Warnings

    /// Checks one fan-out of the memory warning raised at `warning`, which took `duration` and by
    /// the system's count reached `reached` delegates, view controllers and observers, against what
    /// the apps heard. The apps in `timedOut` had not finished their part when the warning's timeout
    /// passed (their run loops busy, a launch's allocation waiting for room, say): they hear it
    /// later, uncounted, and are left out on both sides.
    func checkWarning(
        raisedAt warning: ContinuousClock.Instant, duration: Duration,
        reached: (delegates: Int, viewControllers: Int, observers: Int), timedOut: Set<AppIdentifier> = []
    ) {
        let receipts = (processApps ? takeProcessReceipts(from: warning, to: warning + duration) : journal.takeReceipts(of: warning))
            .filter { !timedOut.contains($0.key) }
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
        if heard != reached {
            problems.append("was counted by the system as reaching \(reached.delegates) delegates, \(reached.viewControllers) controllers and "
                + "\(reached.observers) observers, by the apps as \(heard.0), \(heard.1) and \(heard.2)")
        }
        let end = warning + duration
        let missed = state.withLock { state in
            state.history.keys.filter { app in
                receipts[app] == nil && !timedOut.contains(app) && Self.isRunning(state.history[app] ?? [], throughout: warning ... end)
            }
        }
        problems += missed.sorted().map { "did not reach \($0), running throughout" }
        guard !problems.isEmpty else { return }
        state.withLock { state in
            state.violations += problems.map { at(warning) + "memory warning \($0)" }
        }
    }

    /// The process apps' delegate receipts of the fan-out from `begin` to `end`: the
    /// `didReceiveMemoryWarning` callbacks made then. Earlier ones (of fan-outs not reported) go.
    private func takeProcessReceipts(from begin: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> [AppIdentifier: AppJournal.WarningReceipt] {
        state.withLock { state in
            var receipts: [AppIdentifier: AppJournal.WarningReceipt] = [:]
            for call in state.processWarnings where begin <= call.time && call.time <= end {
                receipts[call.app, default: AppJournal.WarningReceipt()].delegates += 1
            }
            state.processWarnings.removeAll { $0.time <= end }
            return receipts
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
