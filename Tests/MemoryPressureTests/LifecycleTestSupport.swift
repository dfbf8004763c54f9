import MemoryPressure
import Synchronization

/// A thread-safe list of what happened, in order.
final class CallbackLog: Sendable {
    private let entries = Mutex<[String]>([])

    func append(_ entry: String) {
        entries.withLock { $0.append(entry) }
    }

    var all: [String] {
        entries.withLock { $0 }
    }

    func clear() {
        entries.withLock { $0 = [] }
    }
}

/// A delegate that records every callback by name, with hooks for the tests that need more.
final class RecordingDelegate: AppDelegate {
    let log: CallbackLog
    var onDidFinishLaunching: (@Sendable (isolated App, LaunchOptions) -> Void)?
    var onDidEnterBackground: (@Sendable (isolated App) -> Void)?
    var onWillTerminate: (@Sendable (isolated App) -> Void)?
    var onMemoryWarning: (@Sendable (isolated App, MemoryWarning) -> Void)?

    init(log: CallbackLog) {
        self.log = log
    }

    func willFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        log.append("willFinishLaunching")
    }

    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        log.append("didFinishLaunching")
        onDidFinishLaunching?(app, options)
    }

    func didBecomeActive(_ app: isolated App) {
        log.append("didBecomeActive")
    }

    func willResignActive(_ app: isolated App) {
        log.append("willResignActive")
    }

    func didEnterBackground(_ app: isolated App) {
        log.append("didEnterBackground")
        onDidEnterBackground?(app)
    }

    func willEnterForeground(_ app: isolated App) {
        log.append("willEnterForeground")
    }

    func willTerminate(_ app: isolated App) {
        log.append("willTerminate")
        onWillTerminate?(app)
    }

    func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning) {
        log.append("didReceiveMemoryWarning")
        onMemoryWarning?(app, warning)
    }
}

/// A backing store of pretend bytes.
final class FakeStore: ReleasableStore {
    private let bytes: Mutex<Int>
    private let visible = Atomic(false)

    var isVisible: Bool {
        get { visible.load(ordering: .relaxed) }
        set { visible.store(newValue, ordering: .relaxed) }
    }

    init(byteCount: Int) {
        bytes = Mutex(byteCount)
    }

    var byteCount: Int {
        bytes.withLock { $0 }
    }

    func release() -> Int {
        bytes.withLock { bytes in
            defer { bytes = 0 }
            return bytes
        }
    }
}

/// A value several closures share.
final class SharedBox<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) {
        storage = Mutex(value)
    }

    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    func update<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        storage.withLock { body(&$0) }
    }
}

/// Short limits for tests: never the 5 s / 30 s defaults.
let quickConfiguration = try! AppConfiguration(
    backgroundDeadline: .milliseconds(100),
    terminationDeadline: .milliseconds(100),
    backgroundTaskTimeLimit: .milliseconds(100)
)

func makeApp(
    _ name: String,
    log: CallbackLog = CallbackLog(),
    configuration: AppConfiguration = quickConfiguration,
    events: EventSource<LifecycleEvent>? = nil,
    configure: (RecordingDelegate) -> Void = { _ in }
) throws -> App {
    let delegate = RecordingDelegate(log: log)
    configure(delegate)
    return App(identifier: try AppIdentifier(name), delegate: delegate, configuration: configuration, events: events)
}

extension AsyncStream where Element == LifecycleEvent {
    /// Waits for the first event matching `predicate`.
    func first(where predicate: (LifecycleEvent) -> Bool) async -> LifecycleEvent? {
        for await event in self where predicate(event) {
            return event
        }
        return nil
    }

    /// Waits for the next `count` events.
    func collect(_ count: Int) async -> [LifecycleEvent] {
        var events: [LifecycleEvent] = []
        for await event in self.prefix(count) {
            events.append(event)
        }
        return events
    }
}
