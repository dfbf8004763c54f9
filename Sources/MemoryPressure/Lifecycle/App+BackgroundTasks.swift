/// Identifies an open background task, as ``App/beginBackgroundTask(expirationHandler:)`` returns it.
public struct BackgroundTaskIdentifier: Hashable, Sendable, CustomStringConvertible {
    let rawValue: Int

    /// The task's number, for messages: `#1`, `#2`, ….
    public var description: String { "#\(rawValue)" }
}

extension App {
    /// Opens a background task: while any is open, a background app stays in the background instead
    /// of suspending. After `configuration.backgroundTaskTimeLimit` the task's `expirationHandler`
    /// runs on the app's run loop; if the task is still open after it, the app is terminated (reason
    /// `backgroundTaskExpired`). Only a running app (inactive, active, background) can open one.
    ///
    /// Each task has its own time limit, counted from the call; terminating the app cancels every
    /// open task without calling its handler.
    ///
    /// - Parameter expirationHandler: Runs on the app's run loop, isolated to the app, when the time
    ///   limit passes with the task still open; it should end the task
    ///   (``endBackgroundTask(_:)``).
    /// - Returns: The task's identifier, to end it with.
    /// - Throws: ``MemoryPressureError`` with ``MemoryPressureError/Code/invalidTransition`` when
    ///   the app is suspended or not running.
    public nonisolated func beginBackgroundTask(
        expirationHandler: @escaping @Sendable (isolated App) -> Void
    ) throws(MemoryPressureError) -> BackgroundTaskIdentifier {
        let limit = configuration.backgroundTaskTimeLimit
        return try record.withLock { record throws(MemoryPressureError) in
            guard record.state.isRunning else {
                throw .invalidTransition(
                    app: identifier, transition: .beginBackgroundTask, from: record.state,
                    accepted: [.inactive, .active, .background]
                )
            }
            let task = BackgroundTaskIdentifier(rawValue: record.nextBackgroundTask)
            record.nextBackgroundTask += 1
            let generation = record.generation
            let timer = Task.detached { [self] in
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                perform { app in app.expire(task, generation: generation) }
            }
            record.backgroundTasks[task] = LifecycleRecord.BackgroundTask(
                expirationHandler: expirationHandler, timer: timer
            )
            return task
        }
    }

    /// Ends a background task; a background app whose last task this was suspends (once
    /// `didEnterBackground` has returned, when it is still running).
    ///
    /// - Parameter task: The task, as ``beginBackgroundTask(expirationHandler:)`` returned it.
    /// - Throws: ``MemoryPressureError`` with ``MemoryPressureError/Code/unknownBackgroundTask`` when
    ///   `task` is not open: never begun, already ended, or cancelled by a termination.
    public nonisolated func endBackgroundTask(_ task: BackgroundTaskIdentifier) throws(MemoryPressureError) {
        try record.withLock { record throws(MemoryPressureError) in
            guard let ended = record.backgroundTasks.removeValue(forKey: task) else {
                throw .unknownBackgroundTask(app: identifier, task)
            }
            ended.timer.cancel()
            if record.state == .background, record.backgroundTasks.isEmpty, !record.isEnteringBackground {
                move(&record, to: .suspended)
                notificationRegistry.suspend()
            }
        }
    }

    /// The number of open background tasks.
    public nonisolated var openBackgroundTaskCount: Int {
        record.withLock { $0.backgroundTasks.count }
    }

    /// Runs the task's expiration handler, then terminates the app if the task is still open.
    private func expire(_ task: BackgroundTaskIdentifier, generation: Int) {
        guard let open = record.withLock({ $0.generation == generation ? $0.backgroundTasks[task] : nil }) else {
            return
        }
        open.expirationHandler(self)
        let stillOpen = record.withLock { $0.backgroundTasks[task] != nil }
        if stillOpen {
            terminateNow(reason: .backgroundTaskExpired, generation: generation)
        }
    }
}
