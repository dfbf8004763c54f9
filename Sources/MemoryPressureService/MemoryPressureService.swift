import Logging
import MemoryPressure
import ServiceLifecycle

/// Runs a ``MemorySystem`` as a swift-service-lifecycle `Service`, recording its figures with
/// swift-metrics.
///
/// ```swift
/// let system = try MemorySystem(configuration: .init(budget: .resolve(.automatic())))
/// system.register(responseCache)
/// try await ServiceGroup(services: [MemoryPressureService(system: system)], gracefulShutdownSignals: [.sigterm], logger: logger).run()
/// ```
///
/// The service runs the system (``MemorySystem/run()``: the pressure monitor and the reclamation
/// ladder) until the service group shuts down gracefully or the task is cancelled. Then, either
/// way, it stops the monitor and shuts the system down (``MemorySystem/shutDown()``): every
/// running app gets `willTerminate` to save its state, suspended apps are terminated, and the
/// service returns once their records are in. It leaves no task or thread behind.
public struct MemoryPressureService: Service, CustomStringConvertible {
    /// The system the service runs.
    public let system: MemorySystem
    /// How the service records metrics, or nil for none.
    public let metrics: MemoryMetrics.Configuration?

    /// A service running `system`, recording metrics as `metrics` says (nil: no metrics).
    public init(system: MemorySystem, metrics: MemoryMetrics.Configuration? = .standard) {
        self.system = system
        self.metrics = metrics
    }

    /// Runs the system until graceful shutdown or cancellation, then shuts it down. Throws when the
    /// pressure monitor cannot start (after shutting the apps down all the same), or, leaving the
    /// apps alone, ``MemoryPressureError/Code/alreadyRunning`` when the system runs already (in
    /// another service, or this one run twice): that run goes on, and shuts its apps down itself.
    public func run() async throws {
        let system = system
        let recorder = metrics.map { MemoryMetrics(system: system, configuration: $0) }
        defer { recorder?.stop() }
        system.configuration.logger.info("memory pressure service running", metadata: [
            "budget": "\(system.budget.totalBytes)", "target": "\(system.targetBytes)",
        ])
        do {
            try await cancelWhenGracefulShutdown { try await system.run() }
        } catch let error as MemoryPressureError where error.code == .alreadyRunning {
            // Another run's apps: shutting them down here terminated every app of the run that
            // goes on.
            throw error
        } catch {
            await shutDown(system)
            throw error
        }
        await shutDown(system)
    }

    /// The service's name, as service groups log it.
    public var description: String { "MemoryPressureService" }

    private func shutDown(_ system: MemorySystem) async {
        let records = await system.shutDown()
        system.configuration.logger.info("memory pressure service stopped", metadata: [
            "terminated": "\(records.count)",
        ])
    }
}
