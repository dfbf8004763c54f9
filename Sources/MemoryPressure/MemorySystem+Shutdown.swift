import Logging

extension MemorySystem {
    /// Terminates every app that is running or suspended, for reason `explicit`, as a service does
    /// when it shuts down, and returns their records.
    ///
    /// Running apps (inactive, active, background) get `willTerminate`, within their termination
    /// deadline, to save their state (``App/saveState(_:)``); suspended apps are terminated at once,
    /// without a callback, as they saved theirs on entering the background. The apps are terminated
    /// together, so the whole takes about the longest deadline, not their sum.
    ///
    /// Returns once each app's run loop has let go of its memory, or its termination deadline has
    /// passed (such an app's record is added to ``terminations`` when its run loop drains), with
    /// the records in the order they came. Cancellation does not cut the shutdown short: a cancelled
    /// service still delivers `willTerminate` and waits for the records.
    ///
    /// Call it after ``run()`` has returned, so the ladder does not terminate apps at the same time;
    /// an app launched after the call began is not terminated.
    @discardableResult
    public func shutDown() async -> [TerminationRecord] {
        let apps = hosted.apps.filter { $0.state != .notRunning }
        guard !apps.isEmpty else { return [] }
        logger.info("shutting down: terminating every app", metadata: [
            "running": "\(apps.filter(\.state.isRunning).count)",
            "suspended": "\(apps.filter { $0.state == .suspended }.count)",
        ])
        return await withTaskGroup(of: TerminationRecord?.self) { group in
            for app in apps {
                group.addTask {
                    await self.terminator.terminate(app, reason: .explicit, step: nil)
                }
            }
            var records: [TerminationRecord] = []
            for await record in group {
                if let record { records.append(record) }
            }
            return records
        }
    }
}
