@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
import MemoryPressureTestKit
import Synchronization

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

func makeApp(
    _ name: String,
    log: SharedLog<String> = SharedLog(),
    configuration: AppConfiguration = .patient(),
    events: EventSource<LifecycleEvent>? = nil,
    configure: (RecordingDelegate) -> Void = { _ in }
) throws -> App {
    let delegate = RecordingDelegate(log: log)
    configure(delegate)
    return App(identifier: try AppIdentifier(name), delegate: delegate, configuration: configuration, events: events, threads: testThreads)
}

extension AsyncStream where Element == LifecycleEvent {
    /// Waits for the next `count` events.
    func collect(_ count: Int) async -> [LifecycleEvent] {
        var events: [LifecycleEvent] = []
        for await event in self.prefix(count) {
            events.append(event)
        }
        return events
    }
}

/// The threads of the apps the tests make outside a memory system: one group for them all.
let testThreads = AppThreadGroup.forTheProcessLifetime()

extension DeadlineTimers {
    /// Returns true once the timers' thread has looked at its clock's time now (false after
    /// ``eventually(within:_:)``'s limit): a deadline set for now runs only after every deadline due
    /// before it, so what has not run by then was not due.
    func haveLookedAtTheTimeNow() async -> Bool {
        let looked = SharedBox(false)
        schedule(at: clock.now) { looked.value = true }
        return await eventually { looked.value }
    }
}
