/// An app's state and callback state in one word, so that ``App/state`` reads them with one atomic
/// load, never waiting for the app's lock, whatever lock the reader holds: the state's code in the
/// low byte, the callback state's (or 0xFF for none) in the high one.
package enum PublishedStates {
    /// The word for `state` and `callbackState`.
    package static func word(state: AppState, callbackState: AppState?) -> UInt16 {
        code(of: state) | (callbackState.map(code(of:)) ?? 0xFF) << 8
    }

    /// The states in a word made by ``word(state:callbackState:)``.
    package static func states(_ word: UInt16) -> (state: AppState, callbackState: AppState?) {
        (state(code: word & 0xFF) ?? .notRunning, state(code: word >> 8))
    }

    private static func code(of state: AppState) -> UInt16 {
        switch state {
        case .notRunning: 0
        case .inactive: 1
        case .active: 2
        case .background: 3
        case .suspended: 4
        }
    }

    private static func state(code: UInt16) -> AppState? {
        switch code {
        case 0: .notRunning
        case 1: .inactive
        case 2: .active
        case 3: .background
        case 4: .suspended
        default: nil
        }
    }
}
