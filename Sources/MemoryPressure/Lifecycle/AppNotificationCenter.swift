/// An app's notification center, as Foundation's `NotificationCenter` for one app: observers run on
/// the app's run loop, isolated to the app, one at a time in the order notifications were posted.
///
/// Posts to a suspended app are queued and coalesced (see `AppNotification`) and delivered on
/// resume, after `willEnterForeground` and before `didBecomeActive`; posts to an app that is not
/// running are dropped, and terminating an app removes its observers.
public struct AppNotificationCenter: Sendable {
    let app: App

    /// Posts `notification` to the app's observers.
    public func post(_ notification: AppNotification) {
        app.notificationRegistry.post(notification, to: app)
    }

    /// Posts a notification named `name` with `payload`.
    public func post(name: AppNotification.Name, payload: NotificationPayload = .empty) {
        post(AppNotification(name: name, payload: payload))
    }

    /// Calls `handler` for each notification named `name` (or every notification, for nil) until
    /// the observer is removed. An observer added during a delivery first hears the next one.
    @discardableResult
    public func addObserver(
        forName name: AppNotification.Name?,
        using handler: @escaping @Sendable (isolated App, AppNotification) -> Void
    ) -> NotificationObserverToken {
        app.notificationRegistry.add(name: name, handler: handler)
    }

    /// Removes an observer; it is not called again, even for a delivery under way. Removing an
    /// observer already removed does nothing.
    public func removeObserver(_ token: NotificationObserverToken) {
        app.notificationRegistry.remove(token)
    }

    /// The notifications named `name` (or every notification, for nil) from now on. The stream ends
    /// when the app is terminated, and its observer is removed when the consumer stops iterating.
    public func notifications(named name: AppNotification.Name?) -> AsyncStream<AppNotification> {
        let (stream, continuation) = AsyncStream.makeStream(of: AppNotification.self)
        let registry = app.notificationRegistry
        let token = registry.add(name: name, onRemove: { continuation.finish() }) { _, notification in
            continuation.yield(notification)
        }
        continuation.onTermination = { _ in registry.remove(token) }
        return stream
    }
}
