import MemoryPressureCaches
import MemoryPressureLifecycle
import MemoryPressureProcesses

/// What a memory system does at its apps' lifecycle points: every hosted app's
/// ``/MemoryPressureLifecycle/AppHost``.
///
/// The system's own work is called here, in order with each app's events and before any observer
/// hears of them, not from an observer: the system's ``MemorySystem/lifecycleEvents`` are
/// published after the fact, for users.
final class SystemAppHost: AppHost {
    private let backgroundPurge: BackgroundPurge
    private let terminator: Terminator
    private let processes: ProcessApps
    private let registry: PurgeRegistry
    private let compressor: Compressor
    /// Weakly: the apps hold their host, and the hosted apps hold the apps.
    private weak let hosted: HostedApps?

    init(
        backgroundPurge: BackgroundPurge, terminator: Terminator, processes: ProcessApps, registry: PurgeRegistry, hosted: HostedApps,
        compressor: Compressor
    ) {
        self.backgroundPurge = backgroundPurge
        self.terminator = terminator
        self.processes = processes
        self.registry = registry
        self.hosted = hosted
        self.compressor = compressor
    }

    func appEnteredBackground(_ app: App) {
        backgroundPurge.purge(app)
    }

    func app(_ app: App, movedFrom previous: AppState, to state: AppState) {
        let identifier = app.identifier
        hosted?.moved(identifier, from: previous, to: state)
        processes.moved(identifier, from: previous, to: state)
        compressor.moved(identifier, to: state)
        // Each state has its own hard limit, held at the heap's allocations.
        if let limits = hosted?.limits(of: identifier), limits != .none {
            registry.setHardLimit(limits.limit(in: state)?.hardBytes, for: identifier)
        }
    }

    func appTerminated(_ app: App, _ termination: AppTermination, reason: TerminationReason, from state: AppState) {
        // The app's footprint is noted before its process is killed.
        terminator.beginDraining(app.identifier, termination, reason: reason, state: state)
        processes.terminated(app.identifier)
    }

    func appReleased(_ app: App, _ termination: AppTermination) {
        terminator.finish(app.identifier, termination)
    }
}
