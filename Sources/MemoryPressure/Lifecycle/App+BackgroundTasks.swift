/// Identifies an open background task.
public struct BackgroundTaskIdentifier: Hashable, Sendable, CustomStringConvertible {
    let rawValue: Int

    public var description: String { "#\(rawValue)" }
}

extension App {
    /// Opens a background task: while any is open, a background app stays in the background instead
    /// of suspending. After `configuration.backgroundTaskTimeLimit` the task's `expirationHandler`
    /// runs on the app's run loop; if the task is still open after it, the app is terminated (reason
    /// `backgroundTaskExpired`). Only a running app (inactive, active, background) can open one.
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

    /// Ends a background task; a background app whose last task this was suspends.
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
