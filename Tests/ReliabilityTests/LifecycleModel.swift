@testable import MemoryPressure

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

/// A small reference model of the lifecycle, written from the design rather than from `App`: the
/// states, callbacks (and the state each reads, as UIKit's `applicationState`), events, background
/// tasks and time, and coalesced notifications each step should give. The contract of issue 16:
/// - inside each callback the state reads as UIKit reports it, the system's state aside;
/// - background time is one budget per stay in the background, counting from entering it, shared
///   by every task and not counting in the foreground (the apps' limit is too long to run out);
/// - nothing moves an app out of its termination: in `willTerminate` a new task is refused and
///   ending the last one does not suspend the app, and what it posts is never delivered.
struct LifecycleModel {
    struct AppModel {
        var state = AppState.notRunning
        var openTasks: [Int] = []
        var nextTask = 1
        /// Notifications queued while suspended: name, exact net delta, posts.
        var pending: [(name: Int, delta: Int128, posts: Int)] = []
        /// The stay in the background whose time is counting, and the number of stays so far.
        var stay: Int?
        var stays = 0
    }

    let identifiers: [AppIdentifier]
    private(set) var apps: [AppModel]

    init(identifiers: [AppIdentifier]) {
        self.identifiers = identifiers
        apps = Array(repeating: AppModel(), count: identifiers.count)
    }

    /// The outcome `operation` should have, and the model moved past it.
    mutating func apply(_ operation: LifecycleOperation) -> StepOutcome {
        var outcome = StepOutcome(
            states: [], events: Array(repeating: [], count: apps.count), logs: Array(repeating: [], count: apps.count),
            stays: []
        )
        func move(_ index: Int, to next: AppState) {
            outcome.events[index].append(.stateChanged(app: identifiers[index], from: apps[index].state, to: next))
            switch next {
            case .background:
                // A new stay in the background: its time counts from here.
                apps[index].stays += 1
                apps[index].stay = apps[index].stays
            case .suspended:
                break
            case .notRunning, .inactive, .active:
                apps[index].stay = nil
            }
            apps[index].state = next
        }
        /// Delivers a notification to the app's observer, which logs `line`.
        func deliver(_ index: Int, _ name: AppNotification.Name, logging line: String) {
            outcome.events[index].append(.delivered(app: identifiers[index], name))
            outcome.logs[index].append(line)
        }
        /// Calls `callback`, which reads `reads` as the app's state.
        func call(_ index: Int, _ callback: LifecycleCallback, reads: AppState) {
            outcome.events[index].append(.callback(app: identifiers[index], callback))
            outcome.logs[index].append("\(callback) \(reads)")
        }
        func refuse(_ index: Int, _ transition: LifecycleTransition, accepted: [AppState]) -> Bool {
            guard !accepted.contains(apps[index].state) else { return false }
            outcome.error = .invalidTransition(
                app: identifiers[index], transition: transition, from: apps[index].state, accepted: accepted
            )
            return true
        }
        func suspendIfIdle(_ index: Int) {
            if apps[index].openTasks.isEmpty { move(index, to: .suspended) }
        }

        switch operation {
        case .launch(let index, let inBackground):
            guard !refuse(index, .launch, accepted: [.notRunning]) else { break }
            move(index, to: .inactive)
            if inBackground {
                move(index, to: .background)
                call(index, .willFinishLaunching, reads: .background)
                call(index, .didFinishLaunching, reads: .background)
                call(index, .didEnterBackground, reads: .background)
                suspendIfIdle(index)
            } else {
                move(index, to: .active)
                call(index, .willFinishLaunching, reads: .inactive)
                call(index, .didFinishLaunching, reads: .inactive)
                call(index, .didBecomeActive, reads: .active)
            }
        case .deactivate(let index):
            guard !refuse(index, .deactivate, accepted: [.active]) else { break }
            move(index, to: .inactive)
            call(index, .willResignActive, reads: .active)
        case .activate(let index):
            guard !refuse(index, .activate, accepted: [.inactive]) else { break }
            move(index, to: .active)
            call(index, .didBecomeActive, reads: .active)
        case .enterBackground(let index):
            guard !refuse(index, .enterBackground, accepted: [.active, .inactive]) else { break }
            let wasActive = apps[index].state == .active
            if wasActive { move(index, to: .inactive) }
            move(index, to: .background)
            if wasActive { call(index, .willResignActive, reads: .active) }
            call(index, .didEnterBackground, reads: .background)
            suspendIfIdle(index)
        case .enterForeground(let index):
            guard !refuse(index, .enterForeground, accepted: [.background, .suspended]) else { break }
            move(index, to: .inactive)
            move(index, to: .active)
            call(index, .willEnterForeground, reads: .background)
            for queued in apps[index].pending {
                deliver(
                    index, Self.notificationName(queued.name),
                    logging: Self.notificationLine(name: queued.name, delta: Int(clamping: queued.delta), posts: queued.posts)
                )
            }
            apps[index].pending = []
            call(index, .didBecomeActive, reads: .active)
        case .suspend(let index):
            guard !refuse(index, .suspend, accepted: [.background]) else { break }
            if !apps[index].openTasks.isEmpty {
                outcome.error = .backgroundTasksOpen(app: identifiers[index], count: apps[index].openTasks.count)
            } else {
                move(index, to: .suspended)
            }
        case .terminate(let index):
            guard !refuse(index, .terminate, accepted: [.inactive, .active, .background, .suspended]) else { break }
            let from = apps[index].state
            if from != .suspended {
                // The harness's willTerminate asks for a task, ends every open one and posts a
                // notification to itself: refused, still in its state, never delivered.
                call(index, .willTerminate, reads: from)
                outcome.logs[index] += ["beginBackgroundTask refused", "ended \(apps[index].openTasks.count), still \(from)"]
            }
            move(index, to: .notRunning)
            outcome.events[index].append(.terminated(app: identifiers[index], reason: .explicit, state: from))
            outcome.events[index].append(.released(app: identifiers[index]))
            apps[index].openTasks = []
            apps[index].pending = []
        case .beginBackgroundTask(let index):
            guard !refuse(index, .beginBackgroundTask, accepted: [.inactive, .active, .background]) else { break }
            outcome.task = apps[index].nextTask
            apps[index].openTasks.append(apps[index].nextTask)
            apps[index].nextTask += 1
        case .endBackgroundTask(let index, let task):
            guard let position = apps[index].openTasks.firstIndex(of: task) else {
                outcome.error = .unknownBackgroundTask(app: identifiers[index], BackgroundTaskIdentifier(rawValue: task))
                break
            }
            apps[index].openTasks.remove(at: position)
            if apps[index].state == .background { suspendIfIdle(index) }
        case .post(let index, let name, let delta):
            switch apps[index].state {
            case .inactive, .active, .background:
                deliver(index, Self.notificationName(name), logging: Self.notificationLine(name: name, delta: delta, posts: 1))
            case .suspended:
                if let queued = apps[index].pending.firstIndex(where: { $0.name == name }) {
                    apps[index].pending[queued].delta += Int128(delta)
                    apps[index].pending[queued].posts += 1
                } else {
                    apps[index].pending.append((name, Int128(delta), 1))
                }
            case .notRunning:
                break
            }
        case .memoryWarning:
            for index in apps.indices where apps[index].state.isRunning {
                call(index, .didReceiveMemoryWarning, reads: apps[index].state)
                deliver(index, .didReceiveMemoryWarning, logging: "notification \(AppNotification.Name.didReceiveMemoryWarning)")
            }
        }
        outcome.states = apps.map(\.state)
        outcome.stays = apps.map(\.stay)
        return outcome
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
        let app = apps[index]
        let roll = Int.random(in: 0..<100, using: &random)
        if roll < 8 { return Self.anyOperation(app: index, model: app, using: &random) }
        if roll < 20 { return .post(app: index, name: Int.random(in: 0..<3, using: &random), delta: Self.delta(using: &random)) }
        if roll < 28, !app.openTasks.isEmpty {
            return .endBackgroundTask(app: index, task: app.openTasks.randomElement(using: &random)!)
        }
        let choices: [LifecycleOperation] = switch app.state {
        case .notRunning: [.launch(app: index, inBackground: false), .launch(app: index, inBackground: true)]
        case .active: [.deactivate(app: index), .enterBackground(app: index), .beginBackgroundTask(app: index), .terminate(app: index)]
        case .inactive: [.activate(app: index), .enterBackground(app: index), .beginBackgroundTask(app: index), .terminate(app: index)]
        case .background: [.enterForeground(app: index), .beginBackgroundTask(app: index), .terminate(app: index), .suspend(app: index)]
        case .suspended: [.enterForeground(app: index), .enterForeground(app: index), .terminate(app: index)]
        }
        return choices.randomElement(using: &random)!
    }

    private static func anyOperation(app index: Int, model: AppModel, using random: inout some RandomNumberGenerator) -> LifecycleOperation {
        switch Int.random(in: 0..<9, using: &random) {
        case 0: .launch(app: index, inBackground: Bool.random(using: &random))
        case 1: .deactivate(app: index)
        case 2: .activate(app: index)
        case 3: .enterBackground(app: index)
        case 4: .enterForeground(app: index)
        case 5: .suspend(app: index)
        case 6: .terminate(app: index)
        case 7: .beginBackgroundTask(app: index)
        default: .endBackgroundTask(app: index, task: Int.random(in: 0...model.nextTask, using: &random))
        }
    }

    private static func delta(using random: inout some RandomNumberGenerator) -> Int {
        Int.random(in: 0..<10, using: &random) == 0 ? [Int.max, Int.min][Int.random(in: 0...1, using: &random)] : Int.random(in: -5...5, using: &random)
    }
}
