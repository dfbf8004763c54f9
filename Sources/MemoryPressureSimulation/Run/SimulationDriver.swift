import MemoryPressure
import Synchronization

/// Carries out a plan's decisions on the apps at their times, as the user and the events of the
/// scenario would: the same plan always makes the same requests in the same order; what they find
/// (an app terminated meanwhile, say) is up to the memory system.
///
/// The user's decisions are carried out one after another, each once the apps have finished with
/// the one before. A launch into the background is an event's, not the user's: it is requested in
/// its turn, and nothing waits for the app to finish launching, so launches due at one time (a
/// stampede) run at once, each app on its own run loop.
final class SimulationDriver: Sendable {
    private struct State {
        var foreground: AppIdentifier?
        var interrupted: AppIdentifier?
        var spikeHolder: AppIdentifier?
        var decisions = 0
    }

    private let apps: [AppIdentifier: App]
    private let spikeChunkPause: Duration
    private let state = Mutex(State())

    init(apps: [AppIdentifier: App], spikeChunkPause: Duration) {
        self.apps = apps
        self.spikeChunkPause = spikeChunkPause
    }

    /// The app the user has in the foreground.
    var foreground: AppIdentifier? { state.withLock { $0.foreground } }

    /// The decisions carried out so far.
    var decisions: Int { state.withLock { $0.decisions } }

    /// Carries out `plan` from `start`, then waits until `end`; stops early when cancelled.
    func run(_ plan: SimulationPlan, from start: ContinuousClock.Instant, until end: ContinuousClock.Instant) async {
        await withDiscardingTaskGroup { launches in
            for action in plan.actions {
                try? await Task.sleep(until: start + action.time, clock: .continuous)
                guard !Task.isCancelled else { return }
                if case .backgroundLaunch = action.kind {
                    // Started at once, so the launch is requested (the app moved to the background)
                    // before the next decision, and then left to run.
                    launches.addImmediateTask { await self.perform(action.kind) }
                } else {
                    await perform(action.kind)
                }
                state.withLock { $0.decisions += 1 }
            }
            try? await Task.sleep(until: end, clock: .continuous)
        }
    }

    private func perform(_ kind: PlannedAction.Kind) async {
        switch kind {
        case .open(let identifier):
            await open(identifier)
        case .home:
            if let current = state.withLock({ $0.foreground.take() }) {
                await sendToBackground(current)
            }
        case .beginInterruption:
            guard let current = foreground, let app = apps[current], app.state == .active else { return }
            state.withLock { $0.interrupted = current }
            _ = try? await app.deactivate()
        case .endInterruption:
            guard let interrupted = state.withLock({ $0.interrupted.take() }), let app = apps[interrupted], app.state == .inactive else { return }
            _ = try? await app.activate()
        case .backgroundLaunch(let identifier, let work):
            guard let app = apps[identifier], app.state == .notRunning else { return }
            _ = try? await app.launch(options: BackgroundFetch(work: work).launchOptions)
        case .beginSpike(let bytes):
            guard let current = foreground, let app = apps[current] else { return }
            state.withLock { $0.spikeHolder = current }
            var remaining = bytes
            while remaining > 0, !Task.isCancelled {
                let chunk = min(remaining, Self.spikeChunkBytes)
                guard await app.simulateSpike(bytes: chunk) else { return }
                remaining -= chunk
                try? await Task.sleep(for: spikeChunkPause)
            }
        case .endSpike:
            guard let holder = state.withLock({ $0.spikeHolder.take() }), let app = apps[holder] else { return }
            await app.endSimulatedSpike()
        }
    }

    /// Sends the app in the foreground to the background and brings `identifier` forward, launching
    /// it if it is not running (again, if the system terminated it).
    private func open(_ identifier: AppIdentifier) async {
        guard let app = apps[identifier] else { return }
        let previous = state.withLock { state in
            defer { state.foreground = identifier }
            return state.foreground
        }
        if let previous, previous != identifier {
            await sendToBackground(previous)
        }
        // The system may terminate the app between reading its state and moving it: read again.
        for _ in 0 ..< 3 {
            do {
                switch app.state {
                case .notRunning: try await app.launch()
                case .background, .suspended: try await app.enterForeground()
                case .inactive: try await app.activate()
                case .active: break
                }
                return
            } catch {
                continue
            }
        }
    }

    private func sendToBackground(_ identifier: AppIdentifier) async {
        guard let app = apps[identifier], app.state == .active || app.state == .inactive else { return }
        _ = try? await app.enterBackground()
    }

    /// A spike is allocated in pieces of this size, with a pause between them.
    static let spikeChunkBytes = 8 << 20
}
