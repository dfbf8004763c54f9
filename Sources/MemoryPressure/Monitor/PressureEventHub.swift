import Synchronization

/// Hands a monitor's events to its observers and streams, and keeps the latest level and sample.
final class PressureEventHub: Sendable {
    private let latest = Mutex<(level: PressureLevel, sample: MemorySample?)>((.normal, nil))
    private let broadcaster = EventBroadcaster<PressureEvent>()

    var level: PressureLevel { latest.withLock { $0.level } }

    var latestSample: MemorySample? { latest.withLock { $0.sample } }

    /// Records `event` and passes it on: to the streams, then to the observers.
    func publish(_ event: PressureEvent) {
        latest.withLock { latest in
            switch event {
            case .sample(let sample, let level):
                latest = (level, sample)
            case .change(let change):
                latest.level = change.level
            }
        }
        broadcaster.emit(event)
    }

    func addObserver(_ observer: @escaping @Sendable (PressureEvent) -> Void) -> UInt64 {
        broadcaster.addObserver(observer)
    }

    func removeObserver(_ identifier: UInt64) {
        broadcaster.removeObserver(identifier)
    }

    /// A stream of the events from now on, until ``finishStreams()``; it keeps the newest
    /// `bufferLimit` events a slow reader has not taken.
    func makeStream(bufferLimit: Int) -> AsyncStream<PressureEvent> {
        broadcaster.makeStream(bufferingPolicy: .bufferingNewest(bufferLimit))
    }

    /// Ends every stream handed out so far.
    func finishStreams() {
        broadcaster.finishStreams()
    }
}
