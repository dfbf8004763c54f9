import Synchronization
import MemoryPressureRuntime

/// An app's notification observers, and its queue of coalesced notifications while it is suspended.
///
/// When to deliver, queue or drop is the app's lifecycle's decision (``LifecycleStateMachine``'s
/// notification actions, carried out by ``open()``, ``suspend()``, ``resume(_:)`` and ``close()``
/// under the app's lock); the mode it sets is kept here, under the registry's own lock, because every
/// post reads it (a warning's fan-out to thousands of apps) and must not wait for the app's lock.
final class NotificationRegistry: ObserverRegistry {
    /// What happens to a notification posted now, as the lifecycle last set it.
    enum Mode {
        /// The app runs code: deliver on its run loop.
        case delivering
        /// The app is suspended: queue and coalesce.
        case queueing
        /// The app is not running: drop.
        case dropping
    }

    private struct Observer: Sendable {
        /// The observer's place: keys only grow, so the observers are sorted by key.
        let key: UInt64
        /// Held here so that the observer stays registered when its adder lets go of the token, as
        /// with `NotificationCenter`; removal or termination drops it.
        let token: ObservationToken
        let name: AppNotification.Name?
        let handler: @Sendable (isolated App, AppNotification) -> Void
        let onRemove: (@Sendable () -> Void)?
    }

    private struct State {
        var mode = Mode.dropping
        /// In the order added, hence by ascending token.
        var observers: [Observer] = []
        var pending: [AppNotification] = []
        /// Notifications posted to the run loop for delivery that have not run yet, by post number:
        /// a suspension queues them, and their delivery then does nothing.
        var inFlight: [Int: AppNotification] = [:]
        var nextPost = 0
        var nextKey: UInt64 = 0

        /// Queues `notification`, coalesced with one of its name already queued.
        mutating func queue(_ notification: AppNotification) {
            if let index = pending.firstIndex(where: { $0.name == notification.name }) {
                pending[index] = pending[index].coalesced(with: notification)
            } else {
                pending.append(notification)
            }
        }

        /// Where the observer with `key` sits, found by binary search (keys only grow), so a
        /// delivery to n observers checks each one's registration in O(log n).
        func index(of key: UInt64) -> Int? {
            var low = 0
            var high = observers.count
            while low < high {
                let middle = (low + high) / 2
                if observers[middle].key < key { low = middle + 1 } else { high = middle }
            }
            return low < observers.count && observers[low].key == key ? low : nil
        }
    }

    private let state = LibraryLock(State())

    package func add(
        name: AppNotification.Name?,
        onRemove: (@Sendable () -> Void)? = nil,
        handler: @escaping @Sendable (isolated App, AppNotification) -> Void
    ) -> ObservationToken {
        state.withLock { state in
            let key = state.nextKey
            state.nextKey += 1
            let token = ObservationToken(removingFrom: self, key: key)
            state.observers.append(Observer(key: key, token: token, name: name, handler: handler, onRemove: onRemove))
            return token
        }
    }

    /// Removes the observer with `key` (its token was cancelled), then calls its `onRemove`.
    func removeObserver(_ key: UInt64) {
        let removed = state.withLock { state -> Observer? in
            guard let index = state.index(of: key) else { return nil }
            return state.observers.remove(at: index)
        }
        callOut { removed?.onRemove?() }
    }

    /// Delivers, queues or drops `notification` according to the mode. Delivery is posted to the
    /// run loop under the lock, so it keeps its place relative to a concurrent `resume`; if the app
    /// suspends before it runs, the suspension queues the notification instead.
    package func post(_ notification: AppNotification, to app: App) {
        state.withLock { state in
            switch state.mode {
            case .delivering:
                let post = state.nextPost
                state.nextPost += 1
                state.inFlight[post] = notification
                app.enqueue { app in self.deliverPosted(post, in: app) }
            case .queueing:
                state.queue(notification)
            case .dropping:
                break
            }
        }
    }

    /// Delivers the notification posted as `post`, unless a suspension has queued it meanwhile (the
    /// suspension, or the return that followed it, delivers it then) or a termination dropped it.
    /// The app's suspension is held off while its observers run.
    private func deliverPosted(_ post: Int, in app: isolated App) {
        guard let hold = app.holdSuspension() else { return }
        defer { app.release(hold) }
        guard let notification = state.withLock({ $0.inFlight.removeValue(forKey: post) }) else { return }
        _ = deliver(notification, in: app)
    }

    /// Delivers `notification` now if the app is still running; if it has suspended since, queues
    /// (and coalesces) it for the app's return instead, so no app code runs while it is suspended.
    /// The app's suspension is held off while its observers run: one that ends the last background
    /// task finishes before the app suspends.
    func deliverUnlessSuspended(_ notification: AppNotification, in app: isolated App) {
        guard let hold = app.holdSuspension(orQueue: notification) else { return }
        defer { app.release(hold) }
        _ = deliver(notification, in: app)
    }

    /// Queues (and coalesces) `notification` while the app is suspended; drops it otherwise.
    package func queue(_ notification: AppNotification) {
        state.withLock { state in
            if state.mode == .queueing { state.queue(notification) }
        }
    }

    /// Calls each observer of `notification` registered when delivery starts and still registered
    /// when its turn comes, so an observer may remove itself or others during delivery. Returns how
    /// many were called.
    package func deliver(_ notification: AppNotification, in app: isolated App) -> Int {
        app.report(.delivered(app: app.identifier, notification.name))
        let snapshot = state.withLock { state in
            state.observers.filter { $0.name == nil || $0.name == notification.name }
        }
        var called = 0
        for observer in snapshot {
            let registered = state.withLock { state in state.index(of: observer.key) != nil }
            guard registered else { continue }
            callOut { observer.handler(app, notification) }
            called += 1
        }
        return called
    }

    /// Starts delivering (the lifecycle's ``LifecycleStateMachine/Action/openNotifications``: a
    /// launch).
    package func open() {
        state.withLock { $0.mode = .delivering }
    }

    /// Starts queueing (the lifecycle's ``LifecycleStateMachine/Action/suspendNotifications``: a
    /// suspension), first the notifications posted for delivery that have not run, in the order they
    /// were posted.
    package func suspend() {
        state.withLock { state in
            state.mode = .queueing
            for (_, notification) in state.inFlight.sorted(by: { $0.key < $1.key }) {
                state.queue(notification)
            }
            state.inFlight = [:]
        }
    }

    /// Starts delivering again (the lifecycle's
    /// ``LifecycleStateMachine/Action/resumeNotifications(before:after:generation:)``: a return from
    /// suspension) and hands the queued notifications to `schedule`, under the lock, so that they
    /// are posted to the run loop ahead of any notification posted after the resume.
    package func resume(_ schedule: ([AppNotification]) -> Void) {
        state.withLock { state in
            state.mode = .delivering
            schedule(state.pending)
            state.pending = []
        }
    }

    /// Drops every observer and queued notification, and drops posts from now on (the lifecycle's
    /// ``LifecycleStateMachine/Action/closeNotifications(dropping:)``: a termination).
    ///
    /// Called under the app's record lock, it calls nothing: it returns the observers removed, to
    /// release, and their `onRemove` (a stream's end), to call, once the caller holds no lock. An
    /// observer may hold the last reference to anything, whose deinitializer may use the app, and
    /// ending a stream resumes its reader.
    package func close() -> (removed: [any Sendable], onRemove: [@Sendable () -> Void]) {
        let removed = state.withLock { state in
            defer {
                state = State(nextPost: state.nextPost, nextKey: state.nextKey)
            }
            return state.observers
        }
        return (removed, removed.compactMap(\.onRemove))
    }
}
