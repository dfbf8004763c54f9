@_spi(Benchmarks) import MemoryPressureRuntime
import MemoryPressureMeasurement
/// One memory warning, as the system sends it to every running app.
public struct MemoryWarning: Hashable, Sendable {
    /// The pressure level that prompted the warning.
    public var level: PressureLevel
    /// The reading the level was decided on, when there is one.
    public var sample: MemorySample?
    /// When the warning was raised.
    public var time: ContinuousClock.Instant

    /// A warning at `level`, raised at `time`.
    ///
    /// SPI, not API: warnings are raised by the system's ladder. The WarningFanOut and Scale suites
    /// raise one by hand for the bare fan-out, the peer of the warning through the system.
    @_spi(Benchmarks) public init(level: PressureLevel, sample: MemorySample? = nil, time: ContinuousClock.Instant = .now) {
        self.level = level
        self.sample = sample
        self.time = time
    }
}

/// What one memory warning's fan-out reached, and how long it took.
public struct WarningDelivery: Hashable, Sendable {
    /// The warning delivered.
    public var warning: MemoryWarning
    /// The apps the warning was posted to, in order: least important (background, inactive, active)
    /// first, and, among equals, largest first.
    public var order: [AppIdentifier]
    /// The apps still running when their turn came (each app's delegate is called once).
    public var appsReached: Int
    /// The delegates called.
    public var delegatesReached: Int
    /// The view controllers called.
    public var viewControllersReached: Int
    /// The observers called.
    public var observersReached: Int
    /// The apps that had not finished their part when the delivery's timeout passed.
    public var appsTimedOut: [AppIdentifier]
    /// From the first post until the last app finished.
    public var duration: Duration

    /// What one app's part of a fan-out reached.
    package struct Receipt: Sendable {
        package var delegates = 0
        package var viewControllers = 0
        package var observers = 0
    }
}

extension MemoryWarning {
    /// Delivers the warning to every running app among `apps` and waits for them to finish with it
    /// (see ``post(to:footprint:)`` and ``PostedWarning/delivery(timeout:)``).
    ///
    /// SPI for the same reason as `init(level:sample:time:)`: the fan-out without the ladder.
    @_spi(Benchmarks) public func deliver(to apps: [App], timeout: Duration? = nil, footprint: (App) -> Int) async -> WarningDelivery {
        await post(to: apps, footprint: footprint).delivery(timeout: timeout)
    }

    /// Posts the warning to every running app among `apps` (active, inactive, background; never
    /// suspended or not-running ones) and returns at once: on each app's run loop, its delegate,
    /// then its view-controller tree (parents before children), then its observers of
    /// `AppNotification.Name.didReceiveMemoryWarning` run, each exactly once.
    ///
    /// The warning is posted to the apps least important first (background, then inactive, then
    /// active) and, among equals, largest `footprint` first; apps then run their part concurrently,
    /// each on its own run loop.
    package func post(to apps: [App], footprint: (App) -> Int) -> PostedWarning {
        let ordered = Self.deliveryOrder(of: apps, footprint: footprint)
        return PostedWarning(
            warning: self, start: .now, receipts: ordered.map { ($0.identifier, $0.receiveMemoryWarning(self)) },
            timers: ordered.first?.threads.timers
        )
    }

    /// The running apps among `apps`, least important and largest first.
    static func deliveryOrder(of apps: [App], footprint: (App) -> Int) -> [App] {
        apps.compactMap { app -> (app: App, importance: Int, footprint: Int)? in
            guard let importance = app.systemState.warningImportance else { return nil }
            return (app, importance, footprint(app))
        }
        .sorted { lhs, rhs in
            if lhs.importance != rhs.importance { return lhs.importance < rhs.importance }
            if lhs.footprint != rhs.footprint { return lhs.footprint > rhs.footprint }
            return lhs.app.identifier < rhs.app.identifier
        }
        .map(\.app)
    }
}

/// A memory warning posted to the apps' run loops, whose fan-out may still be under way.
package struct PostedWarning: Sendable {
    package let warning: MemoryWarning
    package let start: ContinuousClock.Instant
    package let receipts: [(app: AppIdentifier, receipt: Completion<WarningDelivery.Receipt>)]
    /// Where a delivery's timeout is kept: the timers of the apps' group (nil with no app).
    package let timers: DeadlineTimers?

    /// What the fan-out reached, once every app has finished its part, or, with a `timeout`, once
    /// it has passed since the warning was posted: apps still busy then (a callback that blocks
    /// their run loop) are listed in `WarningDelivery.appsTimedOut` and finish their part later,
    /// uncounted.
    package func delivery(timeout: Duration?) async -> WarningDelivery {
        var delivery = WarningDelivery(
            warning: warning, order: receipts.map(\.app), appsReached: 0,
            delegatesReached: 0, viewControllersReached: 0, observersReached: 0, appsTimedOut: [], duration: .zero
        )
        for (app, completion) in receipts {
            let receipt: WarningDelivery.Receipt
            if let resolved = completion.resolvedValue {
                receipt = resolved
            } else if let timeout, let timers {
                guard let received = await completion.value(timeout: start + timeout - .now, on: timers) else {
                    delivery.appsTimedOut.append(app)
                    continue
                }
                receipt = received
            } else {
                receipt = await completion.value
            }
            delivery.appsReached += receipt.delegates
            delivery.delegatesReached += receipt.delegates
            delivery.viewControllersReached += receipt.viewControllers
            delivery.observersReached += receipt.observers
        }
        delivery.duration = .now - start
        return delivery
    }
}

extension AppState {
    /// The rank for memory warnings, lower first: background, inactive, active; nil for apps that
    /// run no code.
    var warningImportance: Int? {
        switch self {
        case .background: 0
        case .inactive: 1
        case .active: 2
        case .notRunning, .suspended: nil
        }
    }
}

extension App {
    /// Posts `warning` to the run loop for the app's launch running now; the receipt says what it
    /// reached (nothing, if no launch runs now, or if it was no longer running when its turn came).
    nonisolated func receiveMemoryWarning(_ warning: MemoryWarning) -> Completion<WarningDelivery.Receipt> {
        let completion = Completion<WarningDelivery.Receipt>()
        // Under the app's lock: the launch running now has queued its callbacks by then (a launch
        // under way too), and the warning comes after them. An app that runs no launch now (it
        // stopped since it was chosen) is not warned, nor is the launch that follows.
        guard let generation = withRecord({ $0.machine.state.isRunning ? $0.machine.generation : nil }) else {
            completion.resolve(WarningDelivery.Receipt())
            return completion
        }
        enqueue { app in
            completion.resolve(app.handleMemoryWarning(warning, generation: generation))
        }
        return completion
    }

    private func handleMemoryWarning(_ warning: MemoryWarning, generation: Int) -> WarningDelivery.Receipt {
        var receipt = WarningDelivery.Receipt()
        // Only the launch it was posted to hears it, while it runs (a launch terminated meanwhile,
        // after its willTerminate, does not, nor the next one), and the app does not suspend
        // before its delegate, controllers and observers are done.
        guard let hold = holdSuspension() else { return receipt }
        defer { release(hold) }
        guard hold.generation == generation else { return receipt }
        report(.callback(app: identifier, .didReceiveMemoryWarning))
        callOut { delegate?.didReceiveMemoryWarning(self, warning: warning) }
        receipt.delegates = 1
        rootViewController?.forEachInTree { controller in
            callOut { controller.didReceiveMemoryWarning() }
            receipt.viewControllers += 1
        }
        receipt.observers = notificationRegistry.deliver(
            AppNotification(name: .didReceiveMemoryWarning, payload: .memoryWarning(warning)), in: self
        )
        return receipt
    }
}

extension MemoryWarning: CustomStringConvertible {
    /// The warning for people and logs: `memory warning at critical, footprint 900 MiB (…)`.
    public var description: String {
        "memory warning at \(level)" + (sample.map { ", \($0)" } ?? "")
    }
}

extension WarningDelivery: CustomStringConvertible {
    /// The delivery for people and logs: `memory warning at warning reached 10 of 12 apps (10
    /// delegates, 30 view controllers, 20 observers) in 3.2 ms, 1 timed out`.
    public var description: String {
        "memory warning at \(warning.level) reached \(delegatesReached) of \(order.count) apps (\(delegatesReached) delegates, "
            + "\(viewControllersReached) view controllers, \(observersReached) observers) in \(duration.readable)"
            + (appsTimedOut.isEmpty ? "" : ", \(appsTimedOut.count) timed out")
    }
}
