import MemoryPressure

/// One decision of a simulated user, at its time from the start of the session.
package struct PlannedAction: Hashable, Sendable, CustomStringConvertible {
    /// What the user does.
    package enum Kind: Hashable, Sendable {
        /// Brings the app to the foreground (launching it if needed).
        case open(AppIdentifier)
        /// Goes to the home screen.
        case home
        /// An interruption of the foreground app begins.
        case beginInterruption
        /// The interruption ends; the app becomes active again.
        case endInterruption
        /// An event launches the app into the background for `work`.
        case backgroundLaunch(AppIdentifier, work: Duration)
        /// The foreground app allocates `bytes` more.
        case beginSpike(bytes: Int)
        /// The spike's memory is freed.
        case endSpike
    }

    /// When, from the start of the session, to the millisecond.
    package var time: Duration
    /// What.
    package var kind: Kind

    /// `kind` at `time`.
    package init(time: Duration, kind: Kind) {
        self.time = time
        self.kind = kind
    }

    package var description: String {
        let milliseconds = time / .milliseconds(1)
        let when = "\(Int(milliseconds.rounded()))ms"
        switch kind {
        case .open(let app): return "\(when) open \(app)"
        case .home: return "\(when) home"
        case .beginInterruption: return "\(when) interruption begins"
        case .endInterruption: return "\(when) interruption ends"
        case .backgroundLaunch(let app, let work): return "\(when) background launch \(app) for \(work.text)"
        case .beginSpike(let bytes): return "\(when) spike of \(bytes) bytes begins"
        case .endSpike: return "\(when) spike ends"
        }
    }
}
