@_spi(Benchmarks) import MemoryPressureLifecycle
import MemoryPressureMeasurement
import MemoryPressureRuntime

extension MemorySystem {
    /// Sends a memory warning to every running app now, as Xcode's "Simulate Memory Warning" does,
    /// so that a test or a drill sees how apps and their children answer one without making real
    /// memory pressure.
    ///
    /// The warning is delivered exactly as the reclamation ladder delivers its own: to the active,
    /// inactive and background apps (never a suspended one), least important and largest first; on
    /// each app's run loop its delegate, then its view controllers, then its observers of
    /// ``/MemoryPressureLifecycle/AppNotification/Name/didReceiveMemoryWarning``, each once; a
    /// process app's child hears it on its channel. Nothing is purged and nothing terminated.
    ///
    /// The delivery is published on ``events`` as `.warning(delivery, step: .warning)`, as the
    /// ladder's is; a simulated warning carries no sample (`delivery.warning.sample` is nil), which
    /// tells it from one the monitor raised. The system need not be running.
    ///
    /// - Parameter level: The level the apps hear: `.warning` (the default) or `.critical`.
    /// - Returns: What the warning reached, once every app has finished with it or
    ///   ``Configuration/warningTimeout`` has passed (the apps still busy then are in
    ///   ``/MemoryPressureLifecycle/WarningDelivery/appsTimedOut``).
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError/Code-swift.struct/invalidArgument``
    ///   for `.normal`, which is no warning; nothing is sent.
    @discardableResult
    public func simulateMemoryWarning(level: PressureLevel = .warning) async throws(MemoryPressureError) -> WarningDelivery {
        guard level != .normal else { throw .warningLevelNormal() }
        let warning = MemoryWarning(level: level, time: configuration.clock.now)
        let posted = warning.post(to: hosted.apps(in: [.active, .inactive, .background])) {
            registry.footprint(of: $0.identifier).totalBytes
        }
        let delivery = await posted.delivery(timeout: configuration.warningTimeout)
        journal.warned(delivery, step: .warning)
        return delivery
    }
}

extension MemoryPressureError {
    /// A simulated memory warning asked for at the normal level.
    static func warningLevelNormal() -> Self {
        Self(.invalidArgument, "a memory warning's level cannot be normal; expected warning or critical")
    }
}
