import MemoryPressureRuntime
extension App {
    /// Runs `work` on the app's run loop, isolated to the app, and returns its result: how a service
    /// sends a request to a tenant, as an iOS app gets its work on its main run loop.
    ///
    /// The work runs after everything already queued on the run loop (callbacks, notifications,
    /// earlier work), one piece at a time, so it never races the app's delegate, view controllers
    /// or observers, and may use them without locks:
    ///
    /// ```swift
    /// let reply = try await tenant.perform { app in
    ///     app.delegate(as: TenantDelegate.self)?.handle(request)
    /// }
    /// ```
    ///
    /// Only a running app (inactive, active, background) runs code: a suspended app must be brought
    /// back to the foreground first, as on iOS, and the app does not suspend while the work runs.
    ///
    /// - Parameter work: Runs isolated to the app; it may throw.
    /// - Returns: What `work` returned.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/appNotRunning`` when the app
    ///   is suspended or not running when the work's turn comes (it did not run), or what `work`
    ///   threw.
    public func perform<Result: Sendable>(_ work: @Sendable (isolated App) throws -> Result) async throws -> Result {
        guard let hold = holdSuspension() else {
            throw MemoryPressureError.appNotRunning(app: identifier, state: systemState)
        }
        defer { release(hold) }
        return try callOut { try work(self) }
    }

    /// The delegate of the app's current launch as `type`, to use from code isolated to the app
    /// (``perform(_:)``, a notification observer, a callback); nil when the app has none now (it is
    /// not running, or makes a delegate per launch and has not launched) or it is of another type.
    ///
    /// - Parameter type: The delegate's type: a class, so that what the work changes stays.
    /// - Returns: The delegate, or nil.
    public func delegate<Delegate: AppDelegate>(as type: Delegate.Type) -> Delegate? {
        delegate as? Delegate
    }
}
