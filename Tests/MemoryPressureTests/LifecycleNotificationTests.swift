@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Testing

@Suite(.timeLimit(.minutes(1)))
struct LifecycleNotificationTests {
    static let unread: AppNotification.Name = "unreadCountChanged"
    static let locale: AppNotification.Name = "localeChanged"

    @Test func threePostsOfOneNameWhileSuspendedArriveAsOneBeforeDidBecomeActive() async throws {
        let log = SharedLog<String>()
        let received = SharedBox<[AppNotification]>([])
        let app = try makeApp("mail", log: log)
        try await app.launch()
        let center = app.notificationCenter
        center.addObserver(forName: nil) { _, notification in
            received.update { $0.append(notification) }
            log.append("notification \(notification.name)")
        }
        try await app.enterBackground()
        #expect(app.state == .suspended)
        log.clear()
        center.post(name: Self.unread, payload: .delta(1))
        center.post(name: Self.locale, payload: .latest("fr_FR"))
        center.post(name: Self.unread, payload: .delta(1))
        center.post(name: Self.unread, payload: .delta(1))
        center.post(name: Self.locale, payload: .latest("de_DE"))
        #expect(received.value.isEmpty)

        try await app.enterForeground()
        #expect(log.all == [
            "willEnterForeground", "notification unreadCountChanged", "notification localeChanged", "didBecomeActive",
        ])
        var expectedUnread = AppNotification(name: Self.unread, payload: .delta(3))
        expectedUnread.postCount = 3
        var expectedLocale = AppNotification(name: Self.locale, payload: .latest("de_DE"))
        expectedLocale.postCount = 2
        #expect(received.value == [expectedUnread, expectedLocale])
    }

    @Test func postsToARunningAppAreDeliveredOnItsRunLoopInOrder() async throws {
        let app = try makeApp("feed")
        try await app.launch()
        let stream = app.notificationCenter.notifications(named: Self.unread)
        for delta in 1...5 {
            app.notificationCenter.post(name: Self.unread, payload: .delta(delta))
        }
        var deltas: [NotificationPayload] = []
        for await notification in stream.prefix(5) {
            deltas.append(notification.payload)
        }
        #expect(deltas == (1...5).map { .delta($0) })
    }

    @Test func terminationEndsNotificationStreamsAndDropsLaterPosts() async throws {
        let app = try makeApp("gone")
        try await app.launch()
        let stream = app.notificationCenter.notifications(named: nil)
        try await app.terminate(reason: .explicit)
        app.notificationCenter.post(name: Self.unread)
        var count = 0
        for await _ in stream { count += 1 }
        #expect(count == 0)
    }

    @Test func observersMayRemoveThemselvesAndOthersDuringDelivery() async throws {
        let app = try makeApp("observers")
        try await app.launch()
        let center = app.notificationCenter
        let calls = SharedBox<[String]>([])
        let tokens = SharedBox<[String: ObservationToken]>([:])
        tokens.value["self-removing"] = center.addObserver(forName: Self.unread) { app, _ in
            calls.update { $0.append("self-removing") }
            if let token = tokens.value["self-removing"] { app.notificationCenter.removeObserver(token) }
        }
        tokens.value["remover"] = center.addObserver(forName: Self.unread) { app, _ in
            calls.update { $0.append("remover") }
            if let token = tokens.value["removed"] { app.notificationCenter.removeObserver(token) }
        }
        tokens.value["removed"] = center.addObserver(forName: Self.unread) { _, _ in
            calls.update { $0.append("removed") }
        }
        tokens.value["staying"] = center.addObserver(forName: Self.unread) { _, _ in
            calls.update { $0.append("staying") }
        }
        let done = center.notifications(named: Self.unread)
        center.post(name: Self.unread)
        center.post(name: Self.unread)
        for await _ in done.prefix(2) {}
        #expect(calls.value == ["self-removing", "remover", "staying", "remover", "staying"])
    }

    @Test func anObserverStaysWhenItsTokenIsLetGoAndEndsWhenTheTokenIsCancelled() async throws {
        let app = try makeApp("tokens")
        try await app.launch()
        let center = app.notificationCenter
        let calls = SharedBox<[String]>([])
        center.addObserver(forName: Self.unread) { _, _ in calls.update { $0.append("kept") } }
        let cancelled = center.addObserver(forName: Self.unread) { _, _ in calls.update { $0.append("cancelled") } }
        var delivered = center.notifications(named: Self.unread).makeAsyncIterator()
        center.post(name: Self.unread)
        _ = await delivered.next()
        cancelled.cancel()
        center.post(name: Self.unread)
        _ = await delivered.next()
        #expect(calls.value == ["kept", "cancelled", "kept"])
    }

    @Test(arguments: [
        ([NotificationPayload.delta(2), .delta(-5)], NotificationPayload.delta(-3)),
        ([.delta(.max), .delta(1)], .delta(.max)),
        ([.delta(.min), .delta(-1)], .delta(.min)),
        ([.latest("a"), .latest("b")], .latest("b")),
        ([.empty, .empty], .empty),
        ([.delta(4), .latest("x")], .latest("x")),
        ([.delta(5), .empty], .delta(5)),
        ([.empty, .delta(3)], .delta(3)),
        ([.delta(.max), .delta(1), .delta(-1)], .delta(.max)),
        ([.delta(.max), .delta(.max), .delta(.min), .delta(.min)], .delta(-2)),
        ([.delta(-5), .empty, .delta(-7)], .delta(-12)),
    ])
    func payloadsMergeIntoTheirNetChange(posts: [NotificationPayload], net: NotificationPayload) {
        let notifications = posts.map { AppNotification(name: "changed", payload: $0) }
        let merged = notifications.dropFirst().reduce(notifications[0]) { $0.coalesced(with: $1) }
        #expect(merged.payload == net)
        #expect(merged.postCount == posts.count)
    }
}
