import Jemalloc
import Synchronization
import SystemPackage

/// Samples the process's memory on its own thread, judges it against a budget, and announces the
/// pressure level.
///
/// ```swift
/// let monitor = PressureMonitor(configuration: .init(budget: try .resolve(.automatic())))
/// try monitor.start()
/// for await event in monitor.events() {
///     if case .change(let change) = event { print(change) }
/// }
/// ```
///
/// Every interval the monitor reads `/proc/self/statm` (the cheap path) and, as often as the
/// configuration asks, refreshes jemalloc's epoch and reads everything else. Where the kernel allows
/// it arms a PSI trigger and samples at once when it fires. Observers are called on the monitor's
/// thread, one event at a time; they should return quickly.
public final class PressureMonitor: Sendable {
    /// How the monitor samples and judges.
    public let configuration: Configuration
    private let hub = PressureEventHub()
    private let arenas = ArenaRegistry()
    private let thread = Mutex<SamplingThread?>(nil)

    /// A monitor that does nothing until ``start()``.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Identifies an observer added with ``addObserver(_:)``.
    public struct ObserverID: Hashable, Sendable {
        fileprivate let rawValue: UInt64
    }

    /// Starts sampling on a thread of its own; the first sample is taken at once. Does nothing when
    /// already running. Throws when the configuration is invalid or the thread cannot be made.
    public func start() throws(MemoryPressureError) {
        guard configuration.interval > .zero else {
            throw .monitorIntervalNotPositive(configuration.interval)
        }
        try thread.withLock { (running: inout SamplingThread?) throws(MemoryPressureError) in
            guard running == nil else { return }
            do throws(Errno) {
                let control = try SamplingControl()
                let loop = SamplingLoop(configuration: configuration, hub: hub, control: control, arenas: arenas)
                running = try SamplingThread(running: loop, control: control)
            } catch {
                throw .monitorCouldNotStart(error)
            }
        }
    }

    /// Stops sampling, waits for the thread to end (its descriptors are closed with it), and ends
    /// every stream from ``events(bufferLimit:)``. The monitor can be started again.
    public func stop() {
        let running = thread.withLock { $0.take() }
        running?.stop()
        hub.finishStreams()
    }

    /// Whether the monitor is sampling.
    public var isRunning: Bool {
        thread.withLock { $0 != nil }
    }

    /// The level last announced.
    public var level: PressureLevel { hub.level }

    /// The most recent sample, or nil before the first.
    public var latestSample: MemorySample? { hub.latestSample }

    /// Asks for a full sample now rather than at the next interval, for example from a per-app
    /// heap that crossed a threshold. Returns at once; the sample is published as usual.
    public func sampleNow() {
        thread.withLock { $0?.control.requestSample() }
    }

    /// Adds `arena` to those whose allocated bytes go into ``MemorySample/arenaBytes``.
    public func register(_ arena: Arena) {
        arenas.insert(arena)
    }

    /// Removes `arena` from the sampled arenas.
    public func unregister(_ arena: Arena) {
        arenas.remove(arena)
    }

    /// The events from now on, until the monitor stops. A reader that falls behind loses the oldest
    /// events beyond `bufferLimit`.
    public func events(bufferLimit: Int = 64) -> AsyncStream<PressureEvent> {
        hub.makeStream(bufferLimit: bufferLimit)
    }

    /// Calls `observer` with every event from now on, on the monitor's thread.
    @discardableResult
    public func addObserver(_ observer: @escaping @Sendable (PressureEvent) -> Void) -> ObserverID {
        ObserverID(rawValue: hub.addObserver(observer))
    }

    /// Stops calling the observer `identifier` names.
    public func removeObserver(_ identifier: ObserverID) {
        hub.removeObserver(identifier.rawValue)
    }

    deinit {
        stop()
    }
}
