import DequeModule
import Synchronization
import MemoryPressureRuntime
import MemoryPressureMeasurement
import MemoryPressureMonitor

/// The ladder's input from the monitor: every announcement of the level and change of the budget,
/// in order, and the latest sample, however long a ladder run takes.
///
/// A stream that keeps the newest events drops the oldest when the ladder falls behind (a run that
/// waits on two 5-second `willTerminate` deadlines while the monitor samples every 10 ms), and with
/// them announcements. Here a sample replaces the one not yet taken, so the box stays small whatever
/// the rate, and announcements (a few a minute at most: the levels have hysteresis, a settle time
/// and spaced repeats) are all kept.
final class LadderMailbox: Sendable {
    private struct Contents {
        /// Announcements of the level and changes of the budget, oldest first.
        var announcements: Deque<PressureEvent> = []
        var sample: (sample: MemorySample, level: PressureLevel)?
        var reader: CheckedContinuation<PressureEvent?, Never>?
        var isClosed = false

        /// The next event: the oldest announcement, else the latest sample.
        mutating func take() -> PressureEvent? {
            if let announcement = announcements.popFirst() { return announcement }
            guard let (sample, level) = sample.take() else { return nil }
            return .sample(sample, level: level)
        }
    }

    private let contents = LibraryLock(Contents())

    init() {}

    /// Posts `event` from the monitor: kept for the reader, or handed to it if it waits.
    func post(_ event: PressureEvent) {
        let handOff: (CheckedContinuation<PressureEvent?, Never>, PressureEvent)? = contents.withLock { contents in
            guard !contents.isClosed else { return nil }
            switch event {
            case .change, .budgetChanged: contents.announcements.append(event)
            case .sample(let sample, let level): contents.sample = (sample, level)
            }
            guard let reader = contents.reader.take(), let next = contents.take() else { return nil }
            return (reader, next)
        }
        if let (reader, next) = handOff { callOut { reader.resume(returning: next) } }
    }

    /// The next event, waiting for one; nil once the box is closed or the waiting task cancelled.
    /// One reader at a time.
    func next() async -> PressureEvent? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (reader: CheckedContinuation<PressureEvent?, Never>) in
                let ready: PressureEvent?? = contents.withLock { contents in
                    if let next = contents.take() { return .some(next) }
                    if contents.isClosed { return .some(nil) }
                    contents.reader = reader
                    return nil
                }
                if let ready { callOut { reader.resume(returning: ready) } }
            }
        } onCancel: {
            close()
        }
    }

    /// Ends the box: a waiting reader gets nil, and nothing more is kept.
    func close() {
        let reader = contents.withLock { contents in
            contents.isClosed = true
            contents.announcements.removeAll()
            contents.sample = nil
            return contents.reader.take()
        }
        callOut { reader?.resume(returning: nil) }
    }
}
