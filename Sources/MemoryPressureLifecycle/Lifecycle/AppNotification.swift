import MemoryPressureRuntime
/// A notification posted to an app, as Foundation's `Notification` with a payload that can be merged.
///
/// While an app is suspended, the notifications posted to it are queued and coalesced: one per name,
/// carrying the net change of all the posts it stands for (`coalesced(with:)`), delivered in order of
/// the first post of each name when the app resumes.
public struct AppNotification: Hashable, Sendable {
    /// A notification's name.
    public struct Name: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The name's text.
        public let rawValue: String

        /// The name with this text.
        ///
        /// - Parameter rawValue: The name's text.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The name written as a string literal.
        ///
        /// - Parameter value: The name's text.
        public init(stringLiteral value: String) {
            self.init(rawValue: value)
        }

        /// The name's text.
        public var description: String { rawValue }

        /// Posted to a running app's observers on each memory warning, after its delegate and view
        /// controllers; the payload is `.memoryWarning`.
        public static let didReceiveMemoryWarning: Name = "didReceiveMemoryWarning"
    }

    /// The notification's name: what coalescing groups by.
    public var name: Name
    /// What changed.
    public var payload: NotificationPayload
    /// How many posts this notification stands for: 1, or more once coalesced.
    public var postCount: Int

    /// A notification of one post.
    ///
    /// - Parameters:
    ///   - name: The notification's name: what coalescing groups by.
    ///   - payload: What changed; ``NotificationPayload/empty`` by default.
    public init(name: Name, payload: NotificationPayload = .empty) {
        self.name = name
        self.payload = payload
        self.postCount = 1
    }

    /// The exact sum of the deltas coalesced into this notification, which a
    /// ``NotificationPayload/delta(_:)`` may not hold when intermediate sums pass `Int`'s range.
    private var deltaSum: Int128?

    /// Notifications are equal when their names, payloads and post counts are.
    public static func == (lhs: AppNotification, rhs: AppNotification) -> Bool {
        lhs.name == rhs.name && lhs.payload == rhs.payload && lhs.postCount == rhs.postCount
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(payload)
        hasher.combine(postCount)
    }

    /// This notification merged with a `later` one of the same name: the later's name, the net
    /// payload and the sum of their post counts. Deltas add up exactly (an intermediate sum past
    /// `Int`'s range still nets out; only a net change past it is clamped), an empty payload adds
    /// nothing, and otherwise the later payload wins: it describes the state the app resumes into.
    func coalesced(with later: AppNotification) -> AppNotification {
        var merged = later
        merged.postCount = postCount + later.postCount
        switch (payload, later.payload) {
        case (.delta(let first), .delta(let second)):
            let sum = (deltaSum ?? Int128(first)) + (later.deltaSum ?? Int128(second))
            merged.deltaSum = sum
            merged.payload = .delta(Int(clamping: sum))
        case (_, .empty):
            merged.payload = payload
            merged.deltaSum = deltaSum
        default:
            break
        }
        return merged
    }
}

/// What a notification says changed, in a form that merges into a net change.
public enum NotificationPayload: Hashable, Sendable {
    /// Something happened; nothing more to say. Merged: adds nothing to the other payload.
    case empty
    /// A count changed by this much (unread items, pending downloads). Merged: the sum of the
    /// deltas, so three posts of +1 arrive as one +3 (an `Int` too small for the net change holds its
    /// bound).
    case delta(Int)
    /// A setting took this value (orientation, locale, a preference). Merged: the latest value.
    case latest(String)
    /// A memory warning (`AppNotification.Name.didReceiveMemoryWarning`). Merged: the latest one.
    case memoryWarning(MemoryWarning)

}

/// An app's notification center, as Foundation's `NotificationCenter` for one app: observers run on
/// the app's run loop, isolated to the app, one at a time in the order notifications were posted.
///
/// Posts to a suspended app are queued and coalesced (see `AppNotification`) and delivered on
/// resume, after `willEnterForeground` and before `didBecomeActive`; posts to an app that is not
/// running are dropped, and terminating an app removes its observers.
public struct AppNotificationCenter: Sendable {
    package let app: App

    /// Posts `notification` to the app's observers: delivered on the app's run loop while it runs,
    /// queued and coalesced while it is suspended, dropped while it is not running.
    ///
    /// - Parameter notification: The notification.
    public func post(_ notification: AppNotification) {
        app.notificationRegistry.post(notification, to: app)
    }

    /// Posts a notification named `name` with `payload`, as ``post(_:)`` does.
    ///
    /// - Parameters:
    ///   - name: The notification's name.
    ///   - payload: What changed; ``NotificationPayload/empty`` by default.
    public func post(name: AppNotification.Name, payload: NotificationPayload = .empty) {
        post(AppNotification(name: name, payload: payload))
    }

    /// Calls `handler` for each notification named `name` (or every notification, for nil) until
    /// the observer is removed. An observer added during a delivery first hears the next one.
    ///
    /// - Parameters:
    ///   - name: The name to observe, or nil for every notification.
    ///   - handler: Runs on the app's run loop, isolated to the app, once per notification.
    /// - Returns: The token to remove the observer with (``removeObserver(_:)`` or
    ///   ``/MemoryPressureRuntime/ObservationToken/cancel()``). As with `NotificationCenter`, the center keeps the observer
    ///   when the token is let go of; terminating the app removes it.
    @discardableResult
    public func addObserver(
        forName name: AppNotification.Name?,
        using handler: @escaping @Sendable (isolated App, AppNotification) -> Void
    ) -> ObservationToken {
        app.notificationRegistry.add(name: name, handler: handler)
    }

    /// Removes an observer; it is not called again, even for a delivery under way. Removing an
    /// observer already removed does nothing, and so does a token of another center or of an
    /// ``/MemoryPressureRuntime/EventSource``: its observer stays where it is.
    ///
    /// - Parameter token: The token ``addObserver(forName:using:)`` returned.
    public func removeObserver(_ token: ObservationToken) {
        token.cancel(ifRegisteredIn: app.notificationRegistry)
    }

    /// The notifications named `name` (or every notification, for nil) from now on. The stream ends
    /// when the app is terminated, and its observer is removed when the consumer stops iterating.
    ///
    /// - Parameter name: The name to observe, or nil for every notification.
    /// - Returns: A stream for one reader.
    public func notifications(named name: AppNotification.Name?) -> AsyncStream<AppNotification> {
        let (stream, continuation) = AsyncStream.makeStream(of: AppNotification.self)
        let registry = app.notificationRegistry
        let token = registry.add(name: name, onRemove: { continuation.finish() }) { _, notification in
            continuation.yield(notification)
        }
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }
}
