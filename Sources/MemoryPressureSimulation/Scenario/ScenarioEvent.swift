import MemoryPressure

/// Something the user does at a set time in a scenario.
package struct ScenarioEvent: Hashable, Sendable {
    /// What the user does.
    package enum Action: Hashable, Sendable {
        /// Brings the app to the foreground, launching it if it is not running; the app in the
        /// foreground before goes to the background.
        case open(AppIdentifier)
        /// Goes to the home screen: the app in the foreground goes to the background.
        case home
        /// A call or an alert: the foreground app is inactive for `length`.
        case interruption(length: Duration)
        /// An event the app handles in the background (a fetch, a push) launches it there, if it is
        /// not running, for `work`.
        case backgroundLaunch(AppIdentifier, work: Duration)
        /// The foreground app needs `bytes` more for `hold` (decoding a panorama, an export).
        case spike(bytes: Int, hold: Duration)
    }

    /// When, from the start of the session.
    package var time: Duration
    /// What.
    package var action: Action

    /// `action` at `time`.
    package init(time: Duration, action: Action) {
        self.time = time
        self.action = action
    }
}
