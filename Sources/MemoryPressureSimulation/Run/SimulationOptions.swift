import Logging
import MemoryPressure
import SystemPackage

/// How a ``Simulation`` runs its scenario.
package struct SimulationOptions: Sendable {
    /// Whether the memory system reclaims memory (the reclamation ladder runs). Without it the
    /// system only watches, so the report shows what the footprint would have been.
    package var manager = true
    /// How often the system's monitor samples: the tool's default is 50 ms, five times the library's
    /// default, since the simulated apps allocate hundreds of megabytes a second.
    package var monitorInterval: Duration = .milliseconds(50)
    /// How often the footprint is recorded for the timeline (a `/proc/self/statm` read), independently
    /// of the monitor, so the report sees overshoots the monitor would miss.
    package var recordInterval: Duration = .milliseconds(10)
    /// How often the foreground app is handed a slice of user activity.
    package var activityInterval: Duration = .milliseconds(50)
    /// How long a spike pauses between its 8 MiB chunks: 20 ms paces it near 400 MB/s, as an app
    /// decoding a large image or an export would.
    package var spikeChunkPause: Duration = .milliseconds(20)
    /// Where the apps archive their state; nil for a new temporary directory, removed afterwards.
    package var stateDirectory: FilePath?
    /// Runs each app as a child process instead of in this process, started as this gives; nil
    /// (the default) for in-process apps. See ``ProcessApps``.
    package var processes: ProcessApps?
    /// The machine's limits the budget is checked against.
    package var limits: MemoryLimits
    /// Where the memory system logs.
    package var logger: Logger

    /// Options with the defaults, checking budgets against `limits`.
    package init(limits: MemoryLimits, logger: Logger) {
        self.limits = limits
        self.logger = logger
    }
}

extension SimulationOptions {
    /// How a simulation runs its apps as child processes (`mempressure run --processes`): each
    /// scenario app is registered as a process app on the client channel
    /// (`MemorySystem.register(_:process:configuration:limits:options:)`), running what
    /// `specification` gives for it, a program that links MemoryPressureClient and allocates as
    /// its profile says on its callbacks. The plan is the same; what the driver cannot hand a
    /// process (activity slices, spikes, background tasks) the child does by itself or not at all.
    package struct ProcessApps: Sendable {
        /// The process of the app at `index` (1 for the first) of a scenario with `seed`.
        package var specification: @Sendable (_ app: ScenarioApp, _ index: Int, _ seed: UInt64) -> ProcessSpecification

        /// Apps started as `specification` gives.
        package init(specification: @escaping @Sendable (_ app: ScenarioApp, _ index: Int, _ seed: UInt64) -> ProcessSpecification) {
            self.specification = specification
        }
    }
}
