@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses

/// One step of a model-based run: something the system or an app does.
enum LifecycleOperation: Hashable, Sendable, CustomStringConvertible {
    case launch(app: Int, inBackground: Bool)
    case deactivate(app: Int)
    case activate(app: Int)
    case enterBackground(app: Int)
    case enterForeground(app: Int)
    case suspend(app: Int)
    case terminate(app: Int)
    case beginBackgroundTask(app: Int)
    case endBackgroundTask(app: Int, task: Int)
    case post(app: Int, name: Int, delta: Int)
    case memoryWarning

    var description: String {
        switch self {
        case .launch(let app, let inBackground): "launch(app\(app)\(inBackground ? ", background" : ""))"
        case .deactivate(let app): "deactivate(app\(app))"
        case .activate(let app): "activate(app\(app))"
        case .enterBackground(let app): "enterBackground(app\(app))"
        case .enterForeground(let app): "enterForeground(app\(app))"
        case .suspend(let app): "suspend(app\(app))"
        case .terminate(let app): "terminate(app\(app))"
        case .beginBackgroundTask(let app): "beginBackgroundTask(app\(app))"
        case .endBackgroundTask(let app, let task): "endBackgroundTask(app\(app), #\(task))"
        case .post(let app, let name, let delta): "post(app\(app), n\(name), \(delta))"
        case .memoryWarning: "memoryWarning"
        }
    }
}

/// What one app shows after a step: its state, the lifecycle events it emitted and what its
/// delegate and observer recorded during the step (each callback with the state it read there),
/// the stay in the background its background time belongs to; and what the step returned.
struct StepOutcome: Hashable, Sendable {
    var states: [AppState]
    var events: [[LifecycleEvent]]
    var logs: [[String]]
    /// For each app, the stay in the background whose time is counting (1 for its first, 2 for the
    /// next, ...), or nil when none is: in the foreground, whatever task is open, and when not
    /// running.
    var stays: [Int?]
    var error: MemoryPressureError?
    var task: Int?
}

/// The model of the lifecycle: the real ``LifecycleStateMachine``, one per app, stepped on one
/// thread, its actions carried out at once by a stand-in for the app (``AppModel``) that plays the
/// harness's delegate and observer and keeps the notification queue. The model and the code that
/// runs are one thing (issue 23): what the model test checks is that real apps, with their locks,
/// run loops, timers and outboxes, do exactly what their machine decides, step by step. The
/// contract of issue 16 it carries (checked by the machine's own tests and the contract tests):
/// - inside each callback the state reads as UIKit reports it, the system's state aside;
/// - background time is one budget per stay in the background, counting from entering it, shared
///   by every task and not counting in the foreground (the apps' limit is too long to run out);
/// - nothing moves an app out of its termination: in `willTerminate` a new task is refused and
///   ending the last one does not suspend the app, and what it posts is never delivered.
struct LifecycleModel {
    /// The machine of the model's apps: their expiration handlers never run (their background time
    /// outlasts any run), so they are nothing.
    typealias Machine = LifecycleStateMachine<Void>

    /// What a model app emits during a step.
    struct Recording {
        var events: [LifecycleEvent] = []
        var log: [String] = []
    }

    /// One app: its machine, and what carrying out its actions holds, as `App` and its
    /// notification registry hold it.
    struct AppModel {
        /// What happens to a notification posted now, as the machine's actions set it.
        enum Mode {
            case delivering
            case queueing
            case dropping
        }

        var machine: Machine
        var mode = Mode.dropping
        /// Notifications queued while suspended: name, exact net delta, posts.
        var pending: [(name: Int, delta: Int128, posts: Int)] = []
        /// Notifications posted for delivery whose turn on the run loop has not come: the app's
        /// own posts from a callback run after the callbacks queued before them.
        var inFlight: [(name: Int, delta: Int)] = []
        /// The task identifiers the machine issued, by number, as the harness keeps them.
        var tasks: [Int: BackgroundTaskIdentifier] = [:]
        /// The stays in the background seen so far, numbered from 1 by when they began.
        var stays: [ContinuousClock.Instant: Int] = [:]

        /// Carries out `actions` at once, in order, as the app does; its run loop's steps too,
        /// since the harness waits for them.
        mutating func perform(_ actions: [Machine.Action], _ recording: inout Recording) {
            for action in actions {
                switch action {
                case .publishStates:
                    break
                case .report(let event):
                    recording.events.append(event)
                case .run(let steps, let generation):
                    run(steps, generation: generation, &recording)
                case .openNotifications:
                    mode = .delivering
                case .suspendNotifications:
                    mode = .queueing
                    for posted in inFlight { queue(name: posted.name, delta: posted.delta) }
                    inFlight = []
                case .queueNotification(let notification):
                    preconditionFailure("the model delivers its queue while running, never \(notification) while suspended")
                case .resumeNotifications(let before, let after, let generation):
                    mode = .delivering
                    let queued = pending
                    pending = []
                    run(before, generation: generation, &recording)
                    for notification in queued where machine.generation == generation {
                        deliver(name: notification.name, delta: Int(clamping: notification.delta), posts: notification.posts, &recording)
                    }
                    run(after, generation: generation, &recording)
                case .closeNotifications:
                    mode = .dropping
                    pending = []
                    inFlight = []
                case .armBackgroundExpiry, .cancelBackgroundExpiry:
                    // The harness's background time (an hour) never runs out in a run.
                    break
                case .queueRelease:
                    if machine.takePendingRelease() != nil { recording.events.append(.released(app: machine.app)) }
                }
            }
        }

        /// Runs `steps` while the app is in `generation`, as its run loop does.
        private mutating func run(_ steps: [LifecycleStep], generation: Int, _ recording: inout Recording) {
            for step in steps {
                guard machine.generation == generation else { break }
                switch step {
                case .makeDelegate:
                    break
                case .callback(let callback):
                    call(callback, generation: generation, &recording)
                case .deliver(let notification):
                    preconditionFailure("the model delivers its own queue, not \(notification)")
                case .finishEnteringBackground:
                    perform(machine.finishEnteringBackground(generation: generation), &recording)
                case .suspendIfIdle:
                    perform(machine.suspendIfIdle(generation: generation), &recording)
                case .terminate(let reason):
                    perform(machine.terminateNow(reason: reason, generation: generation), &recording)
                case .releaseAfterTermination:
                    recording.events.append(.released(app: machine.app))
                case .runExpirationHandlers:
                    // The harness's background time (an hour) never runs out in a run.
                    break
                }
            }
        }

        /// Calls `callback` as the harness's delegate (`ModelDelegate`) answers it.
        private mutating func call(_ callback: LifecycleCallback, generation: Int, _ recording: inout Recording) {
            perform(machine.beginCallback(callback, generation: generation), &recording)
            recording.events.append(.callback(app: machine.app, callback))
            recording.log.append("\(callback) \(machine.callbackState ?? machine.state)")
            if callback == .willTerminate {
                // The delegate asks for a task, ends every open one and posts a notification to
                // itself.
                if case let (_, actions)? = try? machine.beginBackgroundTask(expirationHandler: ()) {
                    perform(actions, &recording)
                    recording.log.append("beginBackgroundTask began")
                } else {
                    recording.log.append("beginBackgroundTask refused")
                }
                let open = machine.backgroundTasks.keys.sorted { $0.rawValue < $1.rawValue }
                for task in open {
                    if case let (_, actions)? = try? machine.endBackgroundTask(task) { perform(actions, &recording) }
                }
                recording.log.append("ended \(open.count), still \(machine.state)")
                post(name: 9, delta: 1)
            }
            // The model gives no callback a deadline: its delegate never overruns one.
            perform(machine.endCallback(generation: generation, now: .now), &recording)
        }

        /// Posts a notification: delivered once its turn comes, queued while suspended, or dropped.
        mutating func post(name: Int, delta: Int) {
            switch mode {
            case .delivering: inFlight.append((name, delta))
            case .queueing: queue(name: name, delta: delta)
            case .dropping: break
            }
        }

        /// Delivers the notifications posted for delivery, their turn on the run loop come.
        mutating func deliverInFlight(_ recording: inout Recording) {
            let posted = inFlight
            inFlight = []
            for notification in posted {
                deliver(name: notification.name, delta: notification.delta, posts: 1, &recording)
            }
        }

        /// Delivers a notification to the app's observer if the app runs code, holding off its
        /// suspension meanwhile.
        private mutating func deliver(name: Int, delta: Int, posts: Int, _ recording: inout Recording) {
            let (hold, actions) = machine.holdSuspension(orQueue: nil)
            perform(actions, &recording)
            guard let hold else { return }
            recording.events.append(.delivered(app: machine.app, LifecycleModel.notificationName(name)))
            recording.log.append(LifecycleModel.notificationLine(name: name, delta: delta, posts: posts))
            perform(machine.release(hold), &recording)
        }

        /// A memory warning to a running app: its delegate, then its observer, its suspension held.
        mutating func receiveMemoryWarning(_ recording: inout Recording) {
            guard machine.state.isRunning else { return }
            let (held, actions) = machine.holdSuspension(orQueue: nil)
            perform(actions, &recording)
            guard let hold = held else { return }
            recording.events.append(.callback(app: machine.app, .didReceiveMemoryWarning))
            recording.log.append("\(LifecycleCallback.didReceiveMemoryWarning) \(machine.state)")
            recording.events.append(.delivered(app: machine.app, .didReceiveMemoryWarning))
            recording.log.append("notification \(AppNotification.Name.didReceiveMemoryWarning)")
            perform(machine.release(hold), &recording)
        }

        /// Queues (and coalesces) a notification for the app's return.
        private mutating func queue(name: Int, delta: Int) {
            if let queued = pending.firstIndex(where: { $0.name == name }) {
                pending[queued].delta += Int128(delta)
                pending[queued].posts += 1
            } else {
                pending.append((name, Int128(delta), 1))
            }
        }

        /// The number of the stay in the background whose time is counting now, or nil.
        mutating func stay() -> Int? {
            guard let since = machine.backgroundSince else { return nil }
            if let stay = stays[since] { return stay }
            stays[since] = stays.count + 1
            return stays.count
        }
    }

    let identifiers: [AppIdentifier]
    private(set) var apps: [AppModel]
    /// The time the model hands its machines: a second later at each step, so that each stay in
    /// the background begins at a time of its own.
    private var now = ContinuousClock.now

    init(identifiers: [AppIdentifier]) {
        self.identifiers = identifiers
        apps = identifiers.map { identifier in
            AppModel(machine: Machine(
                app: identifier, taskIssuer: BackgroundTaskIdentifier.newIssuer(),
                backgroundTaskTimeLimit: LifecycleHarness.configuration.backgroundTaskTimeLimit, keepsRunningInBackground: false
            ))
        }
    }

    /// The outcome `operation` should have, and the model moved past it.
    mutating func apply(_ operation: LifecycleOperation) -> StepOutcome {
        now += .seconds(1)
        var recordings = Array(repeating: Recording(), count: apps.count)
        var error: MemoryPressureError?
        var task: Int?
        /// Makes a transition of app `index`'s machine and carries out its actions.
        func transition(_ index: Int, _ body: (inout Machine) throws(MemoryPressureError) -> [Machine.Action]) {
            do throws(MemoryPressureError) {
                let actions = try body(&apps[index].machine)
                apps[index].perform(actions, &recordings[index])
            } catch let caught {
                error = caught
            }
        }
        let now = now
        switch operation {
        case .launch(let index, let inBackground):
            let options = LaunchOptions(reason: inBackground ? .backgroundEvent("fetch") : .user)
            transition(index) { machine throws(MemoryPressureError) in try machine.launch(options: options, now: now) }
        case .deactivate(let index):
            transition(index) { machine throws(MemoryPressureError) in try machine.deactivate() }
        case .activate(let index):
            transition(index) { machine throws(MemoryPressureError) in try machine.activate() }
        case .enterBackground(let index):
            transition(index) { machine throws(MemoryPressureError) in try machine.enterBackground(now: now) }
        case .enterForeground(let index):
            transition(index) { machine throws(MemoryPressureError) in try machine.enterForeground() }
        case .suspend(let index):
            transition(index) { machine throws(MemoryPressureError) in try machine.suspend() }
        case .terminate(let index):
            transition(index) { machine throws(MemoryPressureError) in
                try machine.terminate(reason: .explicit, from: [.inactive, .active, .background, .suspended])
            }
        case .beginBackgroundTask(let index):
            transition(index) { machine throws(MemoryPressureError) in
                let (identifier, actions) = try machine.beginBackgroundTask(expirationHandler: ())
                task = identifier.rawValue
                return actions
            }
            if let task { apps[index].tasks[task] = BackgroundTaskIdentifier(rawValue: task, issuer: apps[index].machine.taskIssuer) }
        case .endBackgroundTask(let index, let task):
            let identifier = apps[index].tasks[task] ?? BackgroundTaskIdentifier(rawValue: task)
            transition(index) { machine throws(MemoryPressureError) in try machine.endBackgroundTask(identifier).1 }
        case .post(let index, let name, let delta):
            apps[index].post(name: name, delta: delta)
        case .memoryWarning:
            for index in apps.indices { apps[index].receiveMemoryWarning(&recordings[index]) }
        }
        // What was posted for delivery during the step has had its turn once the step is over.
        for index in apps.indices { apps[index].deliverInFlight(&recordings[index]) }
        return StepOutcome(
            states: apps.map { $0.machine.callbackState ?? $0.machine.state },
            events: recordings.map(\.events),
            logs: recordings.map(\.log),
            stays: apps.indices.map { apps[$0].stay() },
            error: error,
            task: task
        )
    }

    static func notificationName(_ name: Int) -> AppNotification.Name {
        AppNotification.Name(rawValue: "n\(name)")
    }

    static func notificationLine(name: Int, delta: Int, posts: Int) -> String {
        "notification n\(name) delta \(delta) x\(posts)"
    }

    /// A random step, mostly one the app's state allows (so runs go deep), sometimes any step.
    func nextOperation(using random: inout some RandomNumberGenerator) -> LifecycleOperation {
        if Int.random(in: 0..<20, using: &random) == 0 { return .memoryWarning }
        let index = Int.random(in: 0..<apps.count, using: &random)
        let machine = apps[index].machine
        let openTasks = machine.backgroundTasks.keys.map(\.rawValue).sorted()
        let roll = Int.random(in: 0..<100, using: &random)
        if roll < 8 { return Self.anyOperation(app: index, nextTask: machine.nextBackgroundTask, using: &random) }
        if roll < 20 { return .post(app: index, name: Int.random(in: 0..<3, using: &random), delta: Self.delta(using: &random)) }
        if roll < 28, !openTasks.isEmpty {
            return .endBackgroundTask(app: index, task: openTasks.randomElement(using: &random)!)
        }
        let choices: [LifecycleOperation] = switch machine.state {
        case .notRunning: [.launch(app: index, inBackground: false), .launch(app: index, inBackground: true)]
        case .active: [.deactivate(app: index), .enterBackground(app: index), .beginBackgroundTask(app: index), .terminate(app: index)]
        case .inactive: [.activate(app: index), .enterBackground(app: index), .beginBackgroundTask(app: index), .terminate(app: index)]
        case .background: [.enterForeground(app: index), .beginBackgroundTask(app: index), .terminate(app: index), .suspend(app: index)]
        case .suspended: [.enterForeground(app: index), .enterForeground(app: index), .terminate(app: index)]
        }
        return choices.randomElement(using: &random)!
    }

    private static func anyOperation(app index: Int, nextTask: Int, using random: inout some RandomNumberGenerator) -> LifecycleOperation {
        switch Int.random(in: 0..<9, using: &random) {
        case 0: .launch(app: index, inBackground: Bool.random(using: &random))
        case 1: .deactivate(app: index)
        case 2: .activate(app: index)
        case 3: .enterBackground(app: index)
        case 4: .enterForeground(app: index)
        case 5: .suspend(app: index)
        case 6: .terminate(app: index)
        case 7: .beginBackgroundTask(app: index)
        default: .endBackgroundTask(app: index, task: Int.random(in: 0...nextTask, using: &random))
        }
    }

    private static func delta(using random: inout some RandomNumberGenerator) -> Int {
        Int.random(in: 0..<10, using: &random) == 0 ? [Int.max, Int.min][Int.random(in: 0...1, using: &random)] : Int.random(in: -5...5, using: &random)
    }
}
