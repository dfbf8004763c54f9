import MemoryPressureRuntime
import MemoryPressureMeasurement
import MemoryPressureCaches
@_spi(Benchmarks) import MemoryPressureLifecycle
/// Holds each app to its own limits on every sample: a warning once per crossing of the soft limit,
/// termination (reason `perAppLimit`) over the hard limit.
///
/// A sample costs nothing for an app without limits or not running (terminated apps are not in
/// the index it walks), and only a footprint read (an atomic load and a registry look-up) for an
/// app whose footprint and state are what they were at the last sample: the decision is made again
/// only when one of them changed.
struct AppLimitEnforcer {
    let apps: HostedApps
    let registry: PurgeRegistry
    let terminator: Terminator
    let warnings: WarningFollower
    let configuration: MemorySystem.Configuration
    /// Apps warned for their soft limit and not yet back under it, with the soft limit they were
    /// warned at: a different limit (the app moved between foreground and background) re-arms.
    private var warned: [AppIdentifier: Int] = [:]
    /// What each app with limits in use was judged on at the last sample.
    private var judged: [AppIdentifier: Judged] = [:]

    private struct Judged: Equatable {
        let state: AppState
        let footprint: Int
    }

    init(
        apps: HostedApps, registry: PurgeRegistry, terminator: Terminator, warnings: WarningFollower,
        configuration: MemorySystem.Configuration
    ) {
        self.apps = apps
        self.registry = registry
        self.terminator = terminator
        self.warnings = warnings
        self.configuration = configuration
    }

    mutating func enforce(level: PressureLevel, sample: MemorySample) async {
        let previous = judged
        judged = [:]
        for hosted in apps.withLimitsInUse {
            let app = hosted.app
            let state = app.systemState
            guard let limit = hosted.limits.limit(in: state), limit != .none else { continue }
            let footprint = registry.footprint(of: app.identifier).totalBytes
            let now = Judged(state: state, footprint: footprint)
            judged[app.identifier] = now
            guard previous[app.identifier] != now else { continue }
            if let hard = limit.hardBytes, footprint > hard {
                warned[app.identifier] = nil
                _ = await terminator.terminate(app, reason: .perAppLimit, step: .hardLimit)
            } else if let soft = limit.softBytes, footprint > soft {
                // A suspended app runs no code: it is warned when it next runs, if still over.
                guard app.systemState.isRunning, warned[app.identifier] != soft else { continue }
                warned[app.identifier] = soft
                configuration.logger.notice("app over its soft memory limit", metadata: [
                    "app": "\(app.identifier)", "footprint": "\(footprint)", "limit": "\(soft)",
                    "state": "\(app.systemState)",
                ])
                let warning = MemoryWarning(level: max(level, .warning), sample: sample)
                warnings.follow(warning.post(to: [app]) { _ in footprint }, step: .softLimit)
            } else {
                warned[app.identifier] = nil
            }
        }
    }
}
