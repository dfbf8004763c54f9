import Synchronization
import MemoryPressureRuntime

/// Identifies an open background task, as ``App/beginBackgroundTask(expirationHandler:)`` returns it.
public struct BackgroundTaskIdentifier: Hashable, Sendable, CustomStringConvertible {
    package let rawValue: Int
    /// The app that opened the task (each app has a number of its own, never reused in the
    /// process): apps number their tasks alike, yet a task ends only its own app's.
    let issuer: Int

    package init(rawValue: Int, issuer: Int = 0) {
        self.rawValue = rawValue
        self.issuer = issuer
    }

    /// The issuer of the next app made.
    private static let nextIssuer = Atomic<Int>(1)

    /// A number for a new app's tasks, unique in the process.
    static func newIssuer() -> Int {
        nextIssuer.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// The task's number, for messages: `#1`, `#2`, ….
    public var description: String { "#\(rawValue)" }
}

extension App {
    /// Opens a background task: while any is open, a background app stays in the background instead
    /// of suspending. Only a running app (inactive, active, background) that is not terminating can
    /// open one: inside `willTerminate` the app cannot ask for more time.
    ///
    /// Background time is one budget per stay in the background (``backgroundTimeRemaining``),
    /// counted from entering the background and shared by every task: opening another task does not
    /// extend it, and a task opened in the foreground costs nothing until the app leaves it. Shortly
    /// before the time runs out, each open task's `expirationHandler` runs on the app's run loop; a
    /// task still open when it has run out terminates the app (reason `backgroundTaskExpired`),
    /// even if the run loop or a handler is blocked. Terminating the app ends every open task
    /// without calling its handler.
    ///
    /// - Parameter expirationHandler: Runs on the app's run loop, isolated to the app, shortly
    ///   before the background time runs out with the task still open; it should end the task
    ///   (``endBackgroundTask(_:)``).
    /// - Returns: The task's identifier, to end it with.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidTransition`` when
    ///   the app is suspended, not running, or terminating.
    public nonisolated func beginBackgroundTask(
        expirationHandler: @escaping @Sendable (isolated App) -> Void
    ) throws(MemoryPressureError) -> BackgroundTaskIdentifier {
        try withRecord { record throws(MemoryPressureError) in
            let (task, actions) = try record.machine.beginBackgroundTask(expirationHandler: expirationHandler)
            carryOut(actions, on: &record)
            return task
        }
    }

    /// Ends a background task; a background app whose last task this was suspends, unless it is
    /// terminating (nothing moves an app out of its termination). Ended by the app's own code (an
    /// observer, an expiration handler), the app suspends once that code has returned.
    ///
    /// - Parameter task: The identifier ``beginBackgroundTask(expirationHandler:)`` returned.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/unknownBackgroundTask``
    ///   when the task is not open (already ended, or ended by a termination) or was begun by
    ///   another app.
    public nonisolated func endBackgroundTask(_ task: BackgroundTaskIdentifier) throws(MemoryPressureError) {
        // The handler is released as this statement ends, outside the lock: it may hold the last
        // reference to anything, whose deinitializer may use the app.
        _ = try withRecord { record throws(MemoryPressureError) in
            let (handler, actions) = try record.machine.endBackgroundTask(task)
            carryOut(actions, on: &record)
            return handler
        }
    }

    /// The number of open background tasks.
    public nonisolated var openBackgroundTaskCount: Int {
        withRecord { $0.machine.backgroundTasks.count }
    }

    /// Runs the expiration handlers of the tasks still open, oldest first, while the app is still in
    /// the same launch and in the background.
    func runExpirationHandlers(generation: Int) {
        let open = withRecord { $0.machine.beginExpirationHandlers(generation: generation) }
        for (task, expirationHandler) in open {
            // Still running and in the background, and the task still open: the handler runs, and
            // the app does not suspend before it returns (when it ends the last task, say).
            guard let hold = holdSuspension() else { return }
            defer { release(hold) }
            let due = withRecord { $0.machine.isExpirationHandlerDue(task, generation: generation) }
            if due { callOut { expirationHandler(self) } }
        }
    }
}
